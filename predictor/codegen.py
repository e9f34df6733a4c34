"""Code generation for the exports, in the style of m2cgen: one module, Python and C++ side by side.

* The expression language of :mod:`predictor.features` (Python syntax restricted to integer
  ``+ - * // %``, ``cdiv``, ``min``, ``max``, names and integer literals): :func:`parse` checks an
  expression, :func:`expand` substitutes named definitions into it, and the translators
  :class:`PythonExpr` and :class:`CppExpr` write it in either language (:func:`cpp_helpers`:
  the C++ functions its calls become).
* Tree printers :func:`python_tree` and :func:`cpp_tree`: the statements of a
  :class:`~predictor.tree_ir.TreeIR` (integer features compared with exact integer thresholds).
* :class:`ResultCode`, the negative results of every generated selector and of the dispatcher,
  and :func:`cpp_enum`, a C++ ``enum class`` written from a Python enum.

Nothing here knows scikit-learn or the feature table: callers pass the IR, the expressions and
the variable names.  Divisions are written as C++ ``/`` and ``%``, which agree with Python's
``//`` and ``%`` for the non-negative operands and positive divisors the callers guarantee
(arguments are validated before any feature is computed).
"""
from __future__ import annotations

import ast
import functools
from collections import Counter
import enum
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover - the printers import it when called (features needs no numpy)
    from .tree_ir import TreeIR

Expr = Union[str, ast.expr]

#: Functions of the expression language, with their number of arguments.
CALLS: dict[str, int] = {"cdiv": 2, "min": 2, "max": 2}
#: The C++ helper functions of the calls: name and body over ``std::int64_t a, b``.
CPP_FUNCTIONS: dict[str, tuple[str, str]] = {
    "cdiv": ("pk_cdiv", "(a + b - 1) / b"), "min": ("pk_min", "a < b ? a : b"), "max": ("pk_max", "a < b ? b : a"),
}
_BINOPS: dict[type, tuple[str, str, int]] = {  # node type -> Python operator, C++ operator, precedence
    ast.Add: ("+", "+", 1), ast.Sub: ("-", "-", 1),
    ast.Mult: ("*", "*", 2), ast.FloorDiv: ("//", "/", 2), ast.Mod: ("%", "%", 2),
}


class ResultCode(enum.IntEnum):
    """Negative results of the generated selectors (Python and C++) and of the dispatcher's C ABI."""

    INVALID_SHAPE = -1
    UNSUPPORTED_SHAPE = -2
    NO_KERNEL = -3

    @property
    def description(self) -> str:
        """What the code means (the C++ constant's comment)."""
        return _DESCRIPTIONS[self]

    @property
    def cpp_name(self) -> str:
        """The C++ constant's name: ``INVALID_SHAPE`` -> ``kInvalidShape``."""
        return "k" + "".join(w.capitalize() for w in self.name.split("_"))


_DESCRIPTIONS = {
    ResultCode.INVALID_SHAPE: "an argument is outside its limits (or the output would be empty)",
    ResultCode.UNSUPPORTED_SHAPE: "the family cannot run this shape (C or K not a multiple of its channel multiple)",
    ResultCode.NO_KERNEL: "no portfolio kernel can implement the problem",
}


# --------------------------------------------------------------------------- the expression language
def _check(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CALLS:
        if len(node.args) != CALLS[node.func.id] or node.keywords:
            raise ValueError(f"bad call {ast.dump(node)}")
        for a in node.args:
            _check(a, names)
    elif isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"unknown name {node.id!r}")
    elif isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
        pass
    else:
        raise ValueError(f"unsupported syntax in feature expression: {ast.dump(node)}")


def parse(expr: Expr, names: Iterable[str] | None = None) -> ast.expr:
    """The checked syntax tree of ``expr``; with ``names``, every name it uses must be one of them."""
    node = ast.parse(expr, mode="eval").body if isinstance(expr, str) else expr
    _check(node, set(names) if names is not None else {n.id for n in ast.walk(node) if isinstance(n, ast.Name)})
    return node


def names_in(expr: Expr) -> set[str]:
    """The names ``expr`` uses (not the functions it calls)."""
    node = parse(expr)
    calls = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in calls}


class _Substitute(ast.NodeTransformer):
    def __init__(self, defs: Mapping[str, ast.expr]) -> None:
        self.defs = defs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.defs.get(node.id, node)


def expand(expr: Expr, defs: Iterable[tuple[str, str]]) -> ast.expr:
    """``expr`` with every name defined in ``defs`` (name, expression; in order, later ones may
    use earlier ones) replaced by its definition, recursively."""
    trees: dict[str, ast.expr] = {}
    for name, body in defs:
        trees[name] = _Substitute(dict(trees)).visit(parse(body))
    return _Substitute(trees).visit(parse(ast.parse(expr, mode="eval").body if isinstance(expr, str) else expr))


class PythonExpr:
    """Python source of an expression: names renamed by ``names`` (e.g. ``{"H": "p.H"}``) and
    ``cdiv(a, b)`` inlined as ``(a + (b - 1)) // b`` (``ceil(a / b)`` for every integer ``a`` and
    ``b > 0``); parentheses only where needed (``ast.unparse``)."""

    def __init__(self, names: Mapping[str, str] | None = None) -> None:
        self.names = dict(names or {})

    def __call__(self, expr: Expr) -> str:
        return ast.unparse(ast.fix_missing_locations(self._node(parse(expr))))

    def _node(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.BinOp):
            return ast.BinOp(self._node(node.left), node.op, self._node(node.right))
        if isinstance(node, ast.Call):
            args = [self._node(a) for a in node.args]
            if node.func.id == "cdiv":  # type: ignore[attr-defined]
                a, b = args
                b1 = (ast.Constant(b.value - 1) if isinstance(b, ast.Constant)
                      else ast.BinOp(b, ast.Sub(), ast.Constant(1)))
                return ast.BinOp(ast.BinOp(a, ast.Add(), b1), ast.FloorDiv(), b)
            return ast.Call(node.func, args, [])
        if isinstance(node, ast.Name):
            return ast.Name(self.names.get(node.id, node.id), ast.Load())
        return node


class CppExpr:
    """C++ source of an expression over ``std::int64_t`` values.

    ``names`` renames variables (e.g. ``{"H": "s[2]"}``); ``literal`` formats integer literals;
    ``parens="all"`` parenthesises every operation, ``"needed"`` only where C++ precedence
    requires it; ``cdiv``, ``min`` and ``max`` call the helpers of ``functions`` (default: those of
    :func:`cpp_helpers`)."""

    def __init__(self, names: Mapping[str, str] | None = None, literal: str = "INT64_C({})",
                 parens: str = "all", functions: Mapping[str, str] | None = None) -> None:
        if parens not in ("all", "needed"):
            raise ValueError(f"parens must be 'all' or 'needed', got {parens!r}")
        self.names = dict(names or {})
        self.literal = literal
        self.parens = parens
        self.functions = dict(functions or {call: fn for call, (fn, _) in CPP_FUNCTIONS.items()})

    def __call__(self, expr: Expr) -> str:
        return self._text(parse(expr))

    def _text(self, node: ast.expr) -> str:
        if isinstance(node, ast.BinOp):
            _, op, prec = _BINOPS[type(node.op)]
            left, right = self._text(node.left), self._text(node.right)
            if self.parens == "all":
                return f"({left} {op} {right})"
            if _precedence(node.left) < prec:
                left = f"({left})"
            if _precedence(node.right) <= prec:  # keeps the tree: a - (b - c), a * (b / c)
                right = f"({right})"
            return f"{left} {op} {right}"
        if isinstance(node, ast.Call):
            fn = self.functions[node.func.id]  # type: ignore[attr-defined]
            return f"{fn}({', '.join(self._text(a) for a in node.args)})"
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Constant):
            return self.literal.format(node.value)
        raise AssertionError(ast.dump(node))  # parse() admits nothing else


def _precedence(node: ast.expr) -> int:
    return _BINOPS[type(node.op)][2] if isinstance(node, ast.BinOp) else 3


def cpp_helpers() -> str:
    """Definitions of the ``constexpr`` helper functions :class:`CppExpr` calls by default."""
    return "".join(f"constexpr std::int64_t {fn}(std::int64_t a, std::int64_t b) noexcept {{ return {body}; }}\n"
                   for fn, body in CPP_FUNCTIONS.values())


# --------------------------------------------------------------------------- tree printers
def shared_order(ir: TreeIR) -> list[int]:
    """:attr:`~predictor.tree_ir.TreeIR.shared` nodes, each after every shared node below it (the order the
    printers define their helpers in: a C++ lambda must be declared before a caller)."""
    from .tree_ir import Split

    shared, order, seen = set(ir.shared), [], set()
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        i, leaving = stack.pop()
        if leaving:
            if i in shared:
                order.append(i)
            continue
        if i in seen:
            continue
        seen.add(i)
        stack.append((i, True))
        node = ir.nodes[i]
        if isinstance(node, Split):
            stack += [(node.right, False), (node.left, False)]
    return order


@functools.lru_cache(maxsize=None)
def _parsed(src: str) -> ast.expr:
    """The syntax tree of the Python expression ``src`` (shared: never modified)."""
    return ast.parse(src, mode="eval").body


@functools.lru_cache(maxsize=None)
def _dumps(src: str) -> tuple[tuple[ast.AST, str], ...]:
    """Each node of :func:`_parsed` ``(src)`` with its ``ast.dump`` (what identifies an operation)."""
    return tuple((n, ast.dump(n)) for n in ast.walk(_parsed(src)))


@functools.lru_cache(maxsize=None)
def _parts(src: str) -> Counter[str]:
    """How often each operation occurs in ``src``."""
    return Counter(d for n, d in _dumps(src) if isinstance(n, ast.BinOp))


@functools.lru_cache(maxsize=None)
def _largest_shared(f: str, g: str) -> frozenset[str]:
    """The largest operations of expression ``g`` that expression ``f`` computes too (for ``g == f``: those ``f``
    writes more than once)."""
    dump = dict((id(n), d) for n, d in _dumps(g))
    found = _parts(f)
    least = 2 if f == g else 1
    got: set[str] = set()
    stack = [_parsed(g)]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.BinOp) and found[dump[id(n)]] >= least:
            got.add(dump[id(n)])
        elif isinstance(n, ast.BinOp):
            stack += [n.left, n.right]
        elif isinstance(n, ast.Call):
            stack += n.args
    return frozenset(got)


def _shared_below(ir: TreeIR, top: int) -> list[int]:
    """The :attr:`~predictor.tree_ir.TreeIR.shared` nodes the subtree at ``top`` reaches without passing another
    shared node, in the order a depth-first walk (left first) first reaches them."""
    from .tree_ir import Split

    shared, order, seen = set(ir.shared), [], set()
    stack = [top]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        node = ir.nodes[i]
        if i in shared and i != top:
            order.append(i)
        elif isinstance(node, Split):
            stack += [node.right, node.left]
    return order


def _python_walk(ir: TreeIR, at_hand: Mapping[str, str], exprs: Mapping[str, str], candidates: bool,
                 params: Sequence[str], lines: list[str]) -> Callable[..., None]:
    """The statement writer of :func:`python_tree` and :func:`python_shared`: ``write(node, indent, fall={})``
    appends to ``lines`` the statements returning the answer of the subtree at ``node``; a shared subtree below it
    is a call, or, where ``fall`` maps it to a number ``k``, ``_t = k`` falling out of the statements (the caller
    writes what follows).

    A feature's expression reads what its path has computed: an operation that an earlier feature of the path
    bound, or that is a whole earlier feature, is read from that variable (``tail_128x128`` after ``ctas_128x128``
    reads ``f_ctas_128x128``); an operation that the feature repeats or that a feature below it on some path also
    computes is bound with ``:=`` (``_v<n>``) where first evaluated.  Exact: each variable is assigned once on a path,
    before any statement that reads it."""
    from .tree_ir import Leaf, Split

    if ir.shared and not params:
        raise ValueError("a tree with shared subtrees needs the parameters of their functions")
    index = {c: i for i, c in enumerate(ir.classes)}
    shared = set(ir.shared)
    call = ", ".join(params)
    trees = {name: _parsed(src) for name, src in exprs.items()}
    dump = {id(n): d for src in exprs.values() for n, d in _dumps(src)}
    parts = {name: _parts(src) for name, src in exprs.items()}

    def wanted(f: str, later: frozenset[str]) -> frozenset[str]:
        """The operations of ``f`` worth binding: those it repeats, and the largest ones of each feature in
        ``later`` that ``f`` computes too (a later feature's whole expression aside: that is read from ``f_<f>``
        only where equal to ``f``'s)."""
        want = set(_largest_shared(exprs[f], exprs[f]))
        for g in later:
            want |= _largest_shared(exprs[f], exprs[g])
        return frozenset(want - {dump[id(trees[f])]})

    @functools.lru_cache(maxsize=None)
    def expression(f: str, want: frozenset[str], reads: tuple[tuple[str, str], ...],
                   n_bound: int) -> tuple[str, tuple[tuple[str, str], ...]]:
        """The source of feature ``f`` reading the variables of ``reads`` (operation, variable) and binding those of
        ``want`` (``_v<n_bound>`` on), with its new bindings."""
        known, new = dict(reads), []

        def visit(n: ast.expr) -> ast.expr:
            d = dump[id(n)]
            if d in known:
                return ast.Name(known[d], ast.Load())
            if isinstance(n, ast.BinOp):
                left = visit(n.left)  # evaluated before the right operand: its bindings come first
                out: ast.expr = ast.BinOp(left, n.op, visit(n.right))
                if d in want:  # numbered along the path: few locals (a call zeroes every local of its frame)
                    known[d] = var = f"_v{n_bound + len(new)}"
                    new.append((d, var))
                    out = ast.NamedExpr(ast.Name(var, ast.Store()), out)
                return out
            if isinstance(n, ast.Call):
                return ast.Call(n.func, [visit(a) for a in n.args], [])
            return n

        return ast.unparse(visit(trees[f])), tuple(new)

    below: dict[int, frozenset[str]] = {}  # the computed features of a subtree, up to its shared subtrees

    def computed_below(i: int, top: bool = False) -> frozenset[str]:
        if i in shared and not top:
            return frozenset()
        if i not in below:
            node = ir.nodes[i]
            got: frozenset[str] = frozenset()
            if isinstance(node, Split):
                name = ir.feature_names[node.feature]
                own = frozenset() if name in at_hand else frozenset((name,))
                got = own | computed_below(node.left) | computed_below(node.right)
            below[i] = got
        return below[i]

    def walk(i: int, ind: str, have: frozenset[str], known: dict[str, str], fall: Mapping[int, int],
             top: bool = False) -> None:
        node = ir.nodes[i]
        if i in shared and not top:
            lines.append(f"{ind}_t = {fall[i]}" if i in fall else f"{ind}return _n{i}({call})")
            return
        if isinstance(node, Leaf):
            if candidates:
                lines.append(f"{ind}return ({''.join(f'{index[c]}, ' for c in node.choices).rstrip()})")
            else:
                lines.append(f"{ind}return {index[node.label]}")
            return
        assert isinstance(node, Split)
        name = ir.feature_names[node.feature]
        var = at_hand.get(name, f"f_{name}")
        if name not in at_hand and name not in have:
            later = (computed_below(node.left) | computed_below(node.right)) - have - {name}
            reads = tuple((d, known[d]) for d in (*parts[name], dump[id(trees[name])]) if d in known)
            src, bound = expression(name, wanted(name, later), reads, sum(v[:2] == "_v" for v in known.values()))
            lines.append(f"{ind}{var} = {src}")
            known = {**known, **dict(bound)}
            known.setdefault(dump[id(trees[name])], var)  # (a feature equal to an operation bound before: a copy)
            have = have | {name}
        lines.append(f"{ind}if {var} <= {node.threshold}:")
        walk(node.left, ind + "    ", have, known, fall)
        lines.append(f"{ind}else:")
        walk(node.right, ind + "    ", have, known, fall)

    return lambda i, ind, fall={}: walk(i, ind, frozenset(), {}, fall, top=True)  # noqa: B006 - never modified


def python_tree(ir: TreeIR, indent: str, at_hand: Mapping[str, str], exprs: Mapping[str, str],
                candidates: bool = False, params: Sequence[str] = ()) -> list[str]:
    """Python statements returning the index into ``ir.classes`` of the prediction (``candidates``:
    the tuple of the indices of the leaf's candidates, :attr:`~predictor.tree_ir.Leaf.choices`).

    A feature in ``at_hand`` is read from the variable named there; any other is computed as
    ``f_<name> = <exprs[name]>`` (Python source) where a path of the tree first needs it, reading the operations
    an earlier feature of the path computed (``_python_walk``).  A shared
    subtree (:attr:`~predictor.tree_ir.TreeIR.shared`, a grafted model) is written once, after the tree: the
    leaves naming it set ``_t`` and fall out of the tree's statements into ``if _t == k:`` and that subtree's
    statements (a call of 16 arguments cost 2-4% of a routed model's selection, session 50).  A shared subtree below a shared subtree is a
    call ``_n<node>(<params>)`` of a module-level function :func:`python_shared` writes (``params``: the variables
    the statements run with; a nested function would make every variable of the caller a closure cell, 35% slower
    per call)."""
    lines: list[str] = []
    write = _python_walk(ir, at_hand, exprs, candidates, params, lines)  # (raises for shared subtrees, no params)
    after = _shared_below(ir, 0)
    write(0, indent, {n: k for k, n in enumerate(after)})
    if len(after) == 1:  # its statements follow the tree's
        write(after[0], indent)
        return lines
    for k, n in enumerate(after):  # the last one needs no test
        lines.append(f"{indent}if _t == {k}:" if k == 0 else f"{indent}else:" if k == len(after) - 1
                     else f"{indent}elif _t == {k}:")
        write(n, indent + "    ")
    return lines


def python_shared(ir: TreeIR, at_hand: Mapping[str, str], exprs: Mapping[str, str], candidates: bool = False,
                  params: Sequence[str] = ()) -> list[str]:
    """The module-level functions ``def _n<node>(<params>):`` of the shared subtrees that :func:`python_tree`'s
    statements call (those below another shared subtree), each once (none for a tree or a graft of plain models)."""
    lines: list[str] = []
    write = _python_walk(ir, at_hand, exprs, candidates, params, lines)
    called = {j for i in ir.shared for j in _shared_below(ir, i)}
    for i in shared_order(ir):
        if i in called:
            lines.append(f"def _n{i}({', '.join(params)}):")
            write(i, "    ")
    return lines


def cpp_tree(ir: TreeIR, indent: str, var: Callable[[str], str] = "f_{}".format,
             literal: str = "INT64_C({})", exprs: Mapping[str, str] | None = None,
             candidates: str | None = None) -> list[str]:
    """C++ statements returning the index into ``ir.classes`` of the prediction (each leaf's label
    in a comment); with ``candidates`` (the name of an ``int`` array), each leaf instead stores the
    indices of its candidates (:attr:`~predictor.tree_ir.Leaf.choices`) there and returns their
    number.  Feature ``name`` is read from the variable ``var(name)``.  With ``exprs`` (C++
    expressions of some features), such a feature is computed as ``const std::int64_t
    var(name) = exprs[name];`` where a path of the tree first needs it (as :func:`python_tree`):
    a call computes only the features on its own path.  A shared subtree is written once, as a lambda
    ``n<node>`` capturing the caller's variables by reference, that every parent returns the result of."""
    from .tree_ir import Leaf, Split

    index = {c: i for i, c in enumerate(ir.classes)}
    lazy = dict(exprs or {})
    lines: list[str] = []
    shared = set(ir.shared)

    def walk(i: int, ind: str, have: frozenset[str], top: bool = False) -> None:
        node = ir.nodes[i]
        if i in shared and not top:
            lines.append(f"{ind}return n{i}();")
            return
        if isinstance(node, Leaf):
            if candidates:
                c = node.choices
                stores = " ".join(f"{candidates}[{j}] = {index[n]};" for j, n in enumerate(c))
                lines.append(f"{ind}{stores} return {len(c)};  // {node.label}")
            else:
                lines.append(f"{ind}return {index[node.label]};  // {node.label}")
            return
        assert isinstance(node, Split)
        name = ir.feature_names[node.feature]
        if name in lazy and name not in have:
            lines.append(f"{ind}const std::int64_t {var(name)} = {lazy[name]};")
            have = have | {name}
        lines.append(f"{ind}if ({var(name)} <= {literal.format(node.threshold)}) {{")
        walk(node.left, ind + "  ", have)
        lines.append(f"{ind}}} else {{")
        walk(node.right, ind + "  ", have)
        lines.append(f"{ind}}}")

    for i in shared_order(ir):  # a shared subtree once, as a lambda (constexpr since C++17) over the caller's variables
        lines.append(f"{indent}const auto n{i} = [&]() -> int {{")
        walk(i, indent + "  ", frozenset(), top=True)
        lines.append(f"{indent}}};")
    walk(0, indent, frozenset())
    return lines


# --------------------------------------------------------------------------- enums and constants
def cpp_enum(e: type[enum.Enum], underlying: str = "int", leave_out: Iterable[enum.Enum] = ()) -> str:
    """``enum class`` of a Python enum: member ``X`` becomes ``kX``; integer values are kept
    (``Swizzle.Identity2 = 2`` -> ``kIdentity2 = 2``), other values number the members in order.
    ``leave_out``: members not written (only trailing ones keep the others' numbers)."""
    skip = set(leave_out)
    kept = [m for m in e if m not in skip]
    if kept != list(e)[:len(kept)] and not all(type(m.value) is int for m in e):
        raise ValueError(f"{e.__name__}: only trailing members can be left out of a numbered enum")
    if all(type(m.value) is int for m in e):
        members = [f"k{m.name} = {m.value}" for m in kept]
    else:
        members = [f"k{m.name}" for m in kept]
    return f"enum class {e.__name__} : {underlying} {{ {', '.join(members)} }};"


def cpp_result_codes(codes: Iterable[ResultCode], what: str) -> str:
    """``inline constexpr int`` constants of ``codes``, each with a comment ``/// <what> result: ...``."""
    return "\n".join(f"/// {what} result: {c.description}.\ninline constexpr int {c.cpp_name} = {int(c)};"
                     for c in codes)


__all__ = ["ResultCode", "CALLS", "CPP_FUNCTIONS", "parse", "names_in", "expand", "PythonExpr", "CppExpr", "cpp_helpers",
           "python_tree", "python_shared", "cpp_tree", "shared_order", "cpp_enum", "cpp_result_codes"]
