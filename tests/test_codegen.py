"""predictor.codegen: the expression language and its Python / C++ translators (compiled with g++
and compared with Python on random expressions), the tree printers (against TreeIR.predict),
result codes and C++ enums written from the Python enums."""
from __future__ import annotations

import ast
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from predictor import codegen, config
from predictor.codegen import CppExpr, PythonExpr, ResultCode, cpp_enum, cpp_tree, expand, names_in, parse, python_shared, python_tree
from predictor.tree_ir import Leaf, Split, TreeIR, graft

GXX = shutil.which("g++")
NAMES = ("a", "b", "c", "d")


def _random_expr(rng: random.Random, depth: int) -> str:
    """A random expression of the language whose divisors are positive (a literal, ``d`` or a ``max``)."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(NAMES) if rng.random() < 0.6 else str(rng.randint(0, 9))
    kind = rng.choice(("+", "-", "*", "//", "%", "cdiv", "min", "max"))
    left = _random_expr(rng, depth - 1)
    if kind in ("//", "%", "cdiv"):
        right = rng.choice(("d", str(rng.randint(1, 9)), f"max({_random_expr(rng, depth - 1)}, 1)"))
    else:
        right = _random_expr(rng, depth - 1)
    if kind in ("cdiv", "min", "max"):
        return f"{kind}({left}, {right})"
    return f"({left} {kind} {right})"


def _python_value(expr: str, env: dict[str, int]) -> int:
    return eval(PythonExpr()(expr), {"__builtins__": {"min": min, "max": max}}, dict(env))  # noqa: S307


@pytest.mark.skipif(GXX is None, reason="g++ not found")
def test_translators_agree_with_python_in_cpp(tmp_path: Path) -> None:
    """Python (cdiv inlined) and C++ (the helpers of cpp_helpers; every operation parenthesised,
    and only the needed parentheses) compute the same value of 300 random expressions on non-negative inputs."""
    rng = random.Random(1)
    exprs, envs = [], []
    while len(exprs) < 300:
        e = _random_expr(rng, 4)
        env = {n: rng.randint(0, 50) for n in NAMES[:-1]} | {"d": rng.randint(1, 7)}
        if _python_value(e, env) >= 0 and all(_python_value(ast.unparse(n), env) >= 0  # C++ truncates
                                               for n in ast.walk(parse(e)) if isinstance(n, ast.BinOp)):
            exprs.append(e)
            envs.append(env)
    full, needed = CppExpr(), CppExpr(literal="{}", parens="needed")
    body = []
    for e, env in zip(exprs, envs):
        decl = " ".join(f"const std::int64_t {n} = {v};" for n, v in env.items())
        body.append(f"  {{ {decl} std::printf(\"%lld %lld\\n\", (long long)({full(e)}), (long long)({needed(e)})); }}")
    src = tmp_path / "exprs.cpp"
    src.write_text(f"""\
#include <cstdint>
#include <cstdio>
{codegen.cpp_helpers()}int main() {{
{chr(10).join(body)}
  return 0;
}}
""")
    exe = tmp_path / "exprs"
    proc = subprocess.run([GXX, "-std=c++17", "-O0", "-Wall", "-Werror", "-Wno-unused-variable", str(src), "-o",
                           str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(exprs)
    for e, env, line in zip(exprs, envs, out):
        want = _python_value(e, env)
        assert line == f"{want} {want}", (e, env, line, needed(e))


def test_minimal_parentheses_keep_the_tree() -> None:
    needed = CppExpr(literal="{}", parens="needed")
    assert needed("(H + 2 * pad - dilation * (R - 1) - 1) // stride + 1") == \
        "(H + 2 * pad - dilation * (R - 1) - 1) / stride + 1"
    assert needed("a - (b - c)") == "a - (b - c)" and needed("(a - b) - c") == "a - b - c"
    assert needed("a * (b // c)") == "a * (b / c)" and needed("cdiv(a + b, 2) % 3") == "pk_cdiv(a + b, 2) % 3"
    assert CppExpr({"a": "s[0]"})("a * 2") == "(s[0] * INT64_C(2))"
    assert PythonExpr({"a": "p.a"})("cdiv(a, 64) + cdiv(a, b)") == "(p.a + 63) // 64 + (p.a + (b - 1)) // b"
    with pytest.raises(ValueError):
        CppExpr(parens="some")


@pytest.mark.parametrize("bad", ["a / b", "-a", "a ** 2", "abs(a)", "cdiv(a)", "1.5 * a", "a < b", "x.y"])
def test_language_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse(bad)


def test_names_and_expand() -> None:
    with pytest.raises(ValueError, match="unknown name 'z'"):
        parse("a + z", {"a"})
    assert names_in("cdiv(a, b) + max(c, 1)") == {"a", "b", "c"}
    defs = [("x", "a + 1"), ("y", "x * x")]
    assert ast.unparse(expand("y - x", defs)) == "(a + 1) * (a + 1) - (a + 1)"


def _ir() -> TreeIR:
    nodes = (Split(0, 5, 1, 2), Leaf("lo"), Split(1, 10, 3, 4), Leaf("mid"), Leaf("hi"))
    return TreeIR(("x", "y"), ("hi", "lo", "mid"), nodes).validate()


def test_tree_printers_predict_what_the_ir_predicts() -> None:
    ir = _ir()
    src = "\n".join(["def f(x, z):", *python_tree(ir, "    ", {"x": "x"}, {"y": "z * 2"})]) + "\n"
    assert "f_y = z * 2" in src and "f_x" not in src
    ns: dict[str, object] = {}
    exec(src, ns)  # noqa: S102 - generated from the IR above
    for x in range(0, 9):
        for z in range(0, 9):
            assert ns["f"](x, z) == ir.predict_index((x, 2 * z)), (x, z)  # type: ignore[operator]
    cpp = cpp_tree(ir, "  ")
    assert cpp[0] == "  if (f_x <= INT64_C(5)) {" and cpp[1] == "    return 1;  // lo"
    assert sum(line.strip().startswith("return") for line in cpp) == ir.n_leaves


@pytest.mark.skipif(GXX is None, reason="g++ not found")
def test_cpp_tree_compiles_and_agrees(tmp_path: Path) -> None:
    ir = _ir()
    src = tmp_path / "tree.cpp"
    src.write_text("#include <cstdint>\n#include <cstdio>\n"
                   "int f(std::int64_t f_x, std::int64_t f_y) {\n" + "\n".join(cpp_tree(ir, "  ")) + "\n}\n"
                   "int main() { for (int x = 0; x < 9; ++x) for (int y = 0; y < 20; ++y) "
                   "std::printf(\"%d\\n\", f(x, y)); }\n")
    proc = subprocess.run([GXX, "-std=c++17", "-Wall", "-Werror", str(src), "-o", str(tmp_path / "t")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(ir.predict_index((x, y))) for x in range(9) for y in range(20)]


def _grafted() -> TreeIR:
    """A router over two members, one of them named by two router leaves (a shared subtree)."""
    member = TreeIR(("x", "y"), ("hi", "lo"), (Split(1, 3, 1, 2), Leaf("lo", ("lo", "hi")), Leaf("hi"))).validate()
    router = TreeIR(("x", "y"), ("m", "t"), (Split(0, 2, 1, 2), Leaf("t"), Split(0, 6, 3, 4), Leaf("m"), Leaf("t")))
    return graft(router, {"t": _ir(), "m": member})


def _agrees(ir: TreeIR, src: str, cands: bool) -> None:
    """``f(x, z)`` of ``src`` answers as ``ir`` over features (x, 2 z): the label's index or the candidates'."""
    ns: dict[str, object] = {}
    exec(src, ns)  # noqa: S102 - generated from the IR
    for x in range(0, 9):
        for z in range(0, 9):
            want = (tuple(ir.classes.index(c) for c in ir.candidates((x, 2 * z))) if cands
                    else ir.predict_index((x, 2 * z)))
            assert ns["f"](x, z) == want, (x, z)  # type: ignore[operator]


def test_tree_printers_write_a_shared_subtree_once() -> None:
    ir = _grafted()
    assert len(ir.shared) == 1
    for cands in (False, True):
        args = ({"x": "x"}, {"y": "z * 2"}, cands, ("x", "z"))
        src = "\n".join([*python_shared(ir, *args), "def f(x, z):", *python_tree(ir, "    ", *args)]) + "\n"
        # its two router leaves fall out of the router's statements into the member's, written once after them
        assert "def _n" not in src and src.count("_t = 0") == 2 and src.count("if x <= 2:") == 1
        assert src.count("f_y = z * 2") == 2  # the router's own leaf "t" (not shared) and the shared member
        _agrees(ir, src, cands)
    assert "def _n" not in "\n".join(python_tree(_ir(), "    ", {"x": "x", "y": "y"}, {}))
    assert python_shared(_ir(), {"x": "x", "y": "y"}, {}) == []
    with pytest.raises(ValueError, match="parameters"):
        python_tree(ir, "    ", {"x": "x"}, {"y": "z * 2"})
    assert not any("[&]" in line for line in cpp_tree(_ir(), "  "))


def test_python_nested_shared_subtrees_agree() -> None:
    """Three shared members after the router (``if _t == 0`` / ``elif`` / ``else``), one of them a graft whose own
    shared member is a module-level function (a call: below another shared subtree)."""
    member = TreeIR(("x", "y"), ("hi", "lo"), (Split(1, 3, 1, 2), Leaf("lo", ("lo", "hi")), Leaf("hi"))).validate()
    router = TreeIR(("x", "y"), ("g", "m", "t"), (
        Split(1, 4, 1, 4), Split(0, 3, 2, 3), Leaf("g"), Leaf("t"),
        Split(0, 5, 5, 6), Leaf("m"), Split(1, 12, 7, 8), Leaf("g"), Split(0, 1, 9, 10), Leaf("t"), Leaf("m")))
    ir = graft(router, {"g": _grafted(), "t": _ir(), "m": member})
    inner = [i for i in ir.shared if i not in codegen._shared_below(ir, 0)]
    assert len(codegen._shared_below(ir, 0)) == 3 and len(inner) == 1
    for cands in (False, True):
        args = ({"x": "x"}, {"y": "z * 2"}, cands, ("x", "z"))
        src = "\n".join([*python_shared(ir, *args), "def f(x, z):", *python_tree(ir, "    ", *args)]) + "\n"
        assert src.startswith(f"def _n{inner[0]}(x, z):") and src.count("def _n") == 1  # module level
        lines = src.split("\n")
        at = [lines.index(s) for s in ("    if _t == 0:", "    elif _t == 1:")]
        assert at[0] < at[1] < len(lines) - 1 - lines[::-1].index("    else:")
        _agrees(ir, src, cands)


@pytest.mark.skipif(GXX is None, reason="g++ not found")
def test_cpp_shared_subtree_is_constexpr_and_agrees(tmp_path: Path) -> None:
    ir = _grafted()
    body = cpp_tree(ir, "  ", exprs={"y": "z * 2"})
    assert sum("[&]() -> int {" in line for line in body) == 1
    src = tmp_path / "tree.cpp"
    src.write_text("#include <cstdint>\n#include <cstdio>\n"
                   "constexpr int f(std::int64_t f_x, std::int64_t z) {\n" + "\n".join(body) + "\n}\n"
                   f"static_assert(f(7, 0) == {ir.predict_index((7, 0))}, \"constexpr through the shared subtree\");\n"
                   "int main() { for (int x = 0; x < 9; ++x) for (int z = 0; z < 9; ++z) "
                   "std::printf(\"%d\\n\", f(x, z)); }\n")
    proc = subprocess.run([GXX, "-std=c++17", "-Wall", "-Wextra", "-Wshadow", "-Wpedantic", "-Werror", str(src), "-o",
                           str(tmp_path / "t")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(ir.predict_index((x, 2 * z))) for x in range(9) for z in range(9)]


def test_result_codes() -> None:
    assert [int(c) for c in ResultCode] == [-1, -2, -3]
    assert [c.cpp_name for c in ResultCode] == ["kInvalidShape", "kUnsupportedShape", "kNoKernel"]
    text = codegen.cpp_result_codes(ResultCode, "x()")
    assert "inline constexpr int kNoKernel = -3;" in text and text.count("/// x() result: ") == 3
    from predictor import export_cpp, export_py

    assert export_py.INVALID == export_cpp.INVALID_SHAPE == -1
    assert export_py.UNSUPPORTED == export_cpp.UNSUPPORTED_SHAPE == -2


def test_cpp_enums_are_the_python_enums() -> None:
    assert cpp_enum(config.Swizzle) == ("enum class Swizzle : int { kIdentity1 = 1, kIdentity2 = 2, kIdentity4 = 4, "
                                        "kIdentity8 = 8 };")
    assert cpp_enum(config.StrideSupport) == "enum class StrideSupport : int { kStrided, kUnity };"
    from predictor.export_cpp import _ENUMS

    for e in (config.IteratorAlgorithm, config.StrideSupport, config.SplitKMode, config.EpilogueFunctor,
              config.Swizzle, config.KernelSchedule, config.EpilogueSchedule, config.TileScheduler):
        line = next(ln for ln in _ENUMS.splitlines() if ln.startswith(f"enum class {e.__name__} "))
        assert [m.strip().split(" ")[0] for m in line.split("{")[1].split("}")[0].split(",")] == \
            [f"k{m.name}" for m in e]
    # the GEMM family's schedules are in the header (its configs have rows inside a choice)
    assert "kTmaWarpSpecializedCooperative" in _ENUMS and "kStreamK" in _ENUMS
    with pytest.raises(ValueError, match="trailing"):
        cpp_enum(config.StrideSupport, leave_out=[config.StrideSupport.Strided])


def test_features_and_codegen_import_without_numpy() -> None:
    """The expression language needs no numpy (the tree printers import the IR when called)."""
    import sys

    code = "import sys, predictor.features, predictor.codegen; assert 'numpy' not in sys.modules, 'numpy'"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert res.returncode == 0, res.stderr


#: Features whose expressions share operations (a whole feature inside another, a repeated part), for the
#: printer's reuse of what a path computed: each path must read only what it bound, whichever order it meets them in.
_SHARING = {"a": "cdiv(x, 4) * cdiv(y, 8)", "b": "cdiv(x, 4)", "c": "(cdiv(x, 4) * cdiv(y, 8) - 1) % 7 + cdiv(y, 8)",
            "d": "(cdiv(y, 8) * 8 - y) * 10 // (cdiv(y, 8) * 8)", "e": "cdiv(y, 8) * 8 + cdiv(x, 4) * 4", "x": "x",
            "y": "y"}


def _random_tree(rng: random.Random, names: tuple[str, ...], depth: int) -> TreeIR:
    nodes: list[Split | Leaf] = []

    def grow(d: int) -> int:
        i = len(nodes)
        nodes.append(Leaf("z"))
        if d == 0 or rng.random() < 0.15:
            nodes[i] = Leaf(rng.choice("pqr"))
        else:
            f = rng.randrange(len(names))
            left = grow(d - 1)
            nodes[i] = Split(f, rng.randint(0, 40), left, grow(d - 1))
        return i

    grow(depth)
    classes = tuple(sorted({n.label for n in nodes if isinstance(n, Leaf)}))
    return TreeIR(names, classes, tuple(nodes)).validate()


def test_python_tree_reuses_what_a_path_computed_and_agrees() -> None:
    names = tuple(_SHARING)
    exprs = {n: PythonExpr()(e) for n, e in _SHARING.items() if n not in ("x", "y")}
    values = {n: eval(compile(f"lambda x, y: {e}", n, "eval")) for n, e in exprs.items()}  # noqa: S307
    rng = random.Random(7)
    reused = 0
    for _ in range(40):
        ir = _random_tree(rng, names, 8)
        src = "\n".join(["def f(x, y):", *python_tree(ir, "    ", {"x": "x", "y": "y"}, exprs)]) + "\n"
        reused += src.count(":=") + src.count("= f_")
        ns: dict[str, object] = {}
        exec(src, ns)  # noqa: S102 - generated from the IR above
        for x in range(0, 70, 3):
            for y in range(1, 70, 5):
                feats = tuple(x if n == "x" else y if n == "y" else values[n](x, y) for n in names)
                assert ns["f"](x, y) == ir.predict_index(feats), (x, y, src)  # type: ignore[operator]
    assert reused > 40  # the printer did bind and reuse operations
