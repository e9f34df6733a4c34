"""Generate, build and call a CUTLASS conv2d dispatcher from a trained model.

``python -m predictor.dispatcher generate --slug h200`` writes ``export/dispatch/``:

* ``<slug>_dispatch.cu``: exactly the portfolio's CUTLASS kernels (emitted by ``cutlass_library``),
  the exported header ``export/<slug>_conv_heuristics.hpp``, and a C ABI that selects with the
  header and launches the pick:

  - ``int pkd_conv2d_<family>(const int64_t shape[10], int64_t sms, void* x, void* w, void* y,
    float alpha, float beta, void* workspace, size_t workspace_bytes, void* stream, int* chosen)``
    computes ``y = alpha * conv2d(x, w) + beta * y`` (shape = N, C, H, W, K, R, S, stride, pad,
    dilation; layouts of the family: int8 NCxHWx<32> with the filter in CxRSKx<32> **reordered by
    cutlass::reorder_convK<32>**, or fp16 NHWC with a KRSC filter).  Returns 0, or
    -1 (invalid shape), -2 (shape the family cannot run), -3 (no portfolio kernel can implement it),
    2 (workspace too small), 3/4 (initialisation/launch error).  When the predicted kernel cannot
    implement the problem, the rest of its leaf's candidates are tried (the model's next choices),
    then, for a choice, the own picks of its member families' models in the same header (where the choice
    holds them: an SM80 pick refuses a tensor of 2 GiB or more, its SM90 member's pick takes it), then the
    other portfolio kernels in table order (documented fallback); ``*chosen`` receives the index that ran.
  - ``size_t pkd_workspace_bytes_<family>(shape, sms)``: workspace the call will need (the most any
    portfolio kernel needs, so it covers the tuned mode too).
  - **First-call tuning** (optional, for static shapes): ``int pkd_conv2d_tuned_<family>(...)``, the
    same arguments and results as ``pkd_conv2d_<family>``.  On the first call of a (shape, sms) it runs
    each candidate of the model's leaf (``pkd_candidates_<family>``: up to 3, the static pick first)
    that can implement the problem on the caller's stream as the collector times (a warm-up launch,
    batches about 0.05 ms long, each one CUDA-graph replay of its launches as in timing method 3, after
    a dropped warm-up replay, three rounds interleaved over the candidates, median round), into a scratch copy of y (``y`` is written once, by the winner: ``beta != 0`` stays
    correct), caches the fastest index (thread-safe; the first result stored for a key wins), then
    runs it; later calls run the cached kernel.  The tuning call synchronises the stream and the
    device (events, ``cudaMalloc`` of the scratch output).  While the stream is capturing a CUDA graph
    it never tunes: it runs the cached winner, or the static pick (``pkd_conv2d_<family>``) if the
    shape was not tuned yet.  ``int pkd_tuned_pick_<family>(shape, sms)``: the cached index or -1;
    ``void pkd_tune_clear_<family>()`` forgets every winner.  ``pkd_conv2d_<family>`` (the static
    pick) is unchanged and stays the default.
  - ``int pkd_select_<family>(shape, sms)``, ``const char* pkd_name_<family>(int)``.
* ``CMakeLists.txt`` building it against the CUTLASS headers of the ``nvidia-cutlass`` package for
  sm_90 and sm_87.

A model whose portfolio holds CUTLASS 3.x SM90 kernels (family ``f16nhwc90``: TMA + wgmma) gives a
dispatcher that needs ``sm_90a`` (H100/H200 only): the source then includes ``pk_runtime_sm90.h``,
carries a ``// pk-requires-arch: sm_90a`` line, its CMake project builds for ``90a`` only, and
:func:`build` refuses any other target (such kernels compiled for sm_87 or plain sm_90 would
only trap at run time).

A *choice* (:mod:`predictor.model_key`, e.g. ``--family f16nhwc+f16nhwc90``: one model over the
configs of several families with identical tensors) gets one C ABI named by its identifier
(``pkd_conv2d_f16nhwc_f16nhwc90``, same arguments and tensors) over the kernels of all its
members -- CUTLASS 2.x and 3.x side by side, so a choice with an SM90 member needs ``sm_90a`` too.
A choice with the GEMM family (``f16nhwc+f16nhwc90+f16gemm90``) adds its kernels
(``EmitGemmUniversal3xInstance``, ``pk_runtime_gemm90.h``); its model answers them only for the
problems they run (the ``pointwise`` root split), and their runners refuse any other problem.

``Dispatcher`` loads the built library with ctypes (used for the end-to-end GPU run); its methods
take a family or a choice (value or key).
"""
from __future__ import annotations

import argparse
import ctypes
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from .cli import display_path, run_main
from .config import Family, KernelConfig
from .dispatch_text import (
    CLASSES_LINE, DISPATCH_ARCHS, REQUIRES_LINE, RUN_PARAMS, TUNE_CODE, cmake_text, family_code, parts_text,
    problem_code, requires_text,
)
from .emit import (
    kernel_instances, kernel_source, known_arches, nvcc_compile_command, nvcc_link_command, runtime_header_path,
    runtime_headers, translation_unit_classes,
)
from .export_cpp import header_path, load_models, namespace_name
from .model_key import CLI_HELP, Key, all_keys, cli_model_key, members_with_models, model_key
from .tree_ir import TreeIR

_LOG = logging.getLogger(__name__)

def default_families() -> list[str]:
    """The families a dispatcher holds unless told otherwise: every family whose kernels run on all
    of :data:`DISPATCH_ARCHS` (not the architecture-specific ``sm_90a`` ones)."""
    return [f.value for f in Family if all(f.spec.supports(a) for a in DISPATCH_ARCHS)]


def _arch_specific(families: Sequence[str]) -> list[str]:
    """The architecture-specific targets (``sm_90a``) the kernels of ``families`` (model keys: a
    choice needs what any member needs) need."""
    members = {f for key in families for f in model_key(key).families}
    return sorted({f.spec.arch_min for f in members if f.spec.arch_min.endswith("a")})

def generate(models_dir: str | Path = "models", slug: str = "h200", export_dir: str | Path = "export",
             out_dir: str | Path | None = None, families: Sequence[str] | None = None) -> Path:
    """Write ``<out_dir>/<slug>_dispatch.cu``, its runtime headers and ``CMakeLists.txt``.

    ``families`` defaults to :func:`default_families` (the SM80-family models), whose dispatcher
    builds for :data:`DISPATCH_ARCHS` (``export/dispatch/``); name SM90 families explicitly to get
    a Hopper-only dispatcher (default folder ``export/dispatch_sm90/``), or a choice
    (``f16nhwc+f16nhwc90``) for one C ABI over the kernels of all its members."""
    if families is not None:
        families = [model_key(f).value for f in families]  # canonical values of families and choices
    family_args = "" if families is None else "".join(f" --family {f}" for f in families)
    if families is None:
        families = default_families()
    everything = load_models(models_dir, slug)
    models = [m for m in everything if m[0].meta["family"] in families]
    if not models:
        raise FileNotFoundError(f"no {slug}-<family>.tree.json model of {list(families)} in {models_dir}")
    specific = _arch_specific(families)
    default_out = (Path(export_dir) / f"dispatch_{specific[0].replace('_', '').rstrip('a')}" if specific  # sm_90a
                   else Path(export_dir) / "dispatch")
    if out_dir is not None and Path(out_dir) != default_out:  # the regenerate line names it
        family_args += f" --out-dir {display_path(out_dir)}"
    out_dir = default_out if out_dir is None else out_dir
    header = header_path(export_dir, slug)
    if not header.exists():
        raise FileNotFoundError(f"{header} not found: run python -m predictor.train first")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ns = namespace_name(slug)
    portfolios = [(model_key(ir.meta["family"]).identifier, [KernelConfig.from_name(n) for n in ir.classes])
                  for ir, _ in models]
    members = [member_models(ir, everything) for ir, _ in models]
    fam_code = [family_code(fam, cfgs, [(model_key(m.meta["family"]).identifier, member_table(ir, m)) for m, _ in mem])
                for (fam, cfgs), (ir, _), mem in zip(portfolios, models, members)]
    fallback = sorted({(m.meta["family"], sha) for mem in members for m, sha in mem})
    kernels = kernel_instances(c for _, cfgs in portfolios for c in cfgs)
    # architecture-specific families (SM90: sm_90a) fix the dispatcher's target
    needs = _arch_specific([c.family.value for c in kernels.values()])
    if len(needs) > 1:
        raise ValueError(f"portfolio kernels need several architecture-specific targets {needs}: "
                         "one dispatcher cannot hold them")
    classes = translation_unit_classes(kernels.values())  # kernels that can share a translation unit
    headers = runtime_headers(kernels.values())
    includes = "".join(f"#if PKD_CLASS({i})\n" + "".join(f'#include "{h}"\n' for h in runtime_headers(cls))
                       + "#endif\n" for i, cls in enumerate(classes))
    srcs = "\n".join(f"#if PKD_KERNEL_PART({i}, {t})\n{kernel_source(c, include_runtime=False)}#endif\n"
                     for i, cls in enumerate(classes) for t, c in enumerate(cls))
    decls = "\n".join(f'extern "C" int pk_run_{k}({RUN_PARAMS});' for k in kernels)
    rel_header = Path(os.path.relpath(header.resolve(), out.resolve()))
    text = f"""\
// generated by predictor.dispatcher, do not edit
// regenerate: python -m predictor.dispatcher generate --models-dir {display_path(models_dir)} --slug {slug} \
--export-dir {display_path(export_dir)}{family_args}
// models: {", ".join(f"{ir.meta['family']} sha256 {sha}" for ir, sha in models)}
{"".join(f"// member model (its pick is a fall-back): {fam} sha256 {sha}" + chr(10) for fam, sha in fallback)}// CUTLASS conv2d fprop dispatcher: the portfolio's kernels + the exported selection header.
{requires_text(needs)}#include <array>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <map>
#include <mutex>

{parts_text(len(classes))}
{includes}#include "{rel_header.as_posix()}"

namespace NS = cutlass_conv_predictor::{ns};

{srcs}
#if PKD_DISPATCH_PART
using PkdRunFn = int (*)({RUN_PARAMS});
{decls}
{problem_code()}{TUNE_CODE}{"".join(fam_code)}
#endif  // PKD_DISPATCH_PART
"""
    (out / f"{slug}_dispatch.cu").write_text(text)
    for h in headers:
        shutil.copy(runtime_header_path(h), out / h)
    (out / "CMakeLists.txt").write_text(cmake_text(slug, needs, len(classes)))
    _LOG.info("wrote %s (%d kernels)", out / f"{slug}_dispatch.cu", len(kernels))
    return out / f"{slug}_dispatch.cu"


def member_models(ir: TreeIR, models: Sequence[tuple[TreeIR, str]]) -> list[tuple[TreeIR, str]]:
    """The models (with their sha256) among ``models`` of the member families of the choice ``ir`` models, in the
    choice's family order (:func:`predictor.model_key.members_with_models`; none for a single family's model): their
    picks are the dispatcher's fall-back where the choice's pick and its leaf's candidates cannot run a problem."""
    by_family = {m.meta["family"]: (m, sha) for m, sha in models}
    return [by_family[f] for f in members_with_models(model_key(ir.meta["family"]), by_family.__contains__)]


def member_table(choice: TreeIR, member: TreeIR) -> list[int]:
    """Per config of ``member``'s table, its index in ``choice``'s table, or -1 where the choice does not hold it."""
    index = {name: i for i, name in enumerate(choice.classes)}
    return [index.get(name, -1) for name in member.classes]


def min_parts(source: str | Path) -> int:
    """The number of translation units a generated dispatcher source must at least be compiled as
    (its ``PKD_CLASSES``: 1 unless some of its kernels cannot share a translation unit)."""
    for line in Path(source).read_text().splitlines():
        if line.startswith(CLASSES_LINE):
            return int(line[len(CLASSES_LINE):])
    return 1


# ------------------------------------------------------------------------------------------------

def required_arch(source: str | Path) -> str | None:
    """The architecture a generated dispatcher source is restricted to (``sm_90a``), if any."""
    with open(source) as fh:
        for _, line in zip(range(16), fh):
            if line.startswith(REQUIRES_LINE):
                return line[len(REQUIRES_LINE):].strip()
    return None


def build(source: str | Path, arch: str = "sm_90", out: str | Path | None = None,
          compile_only: bool = False, jobs: int = 1) -> Path:
    """Compile the dispatcher with nvcc (a shared library, or an object with ``compile_only``).

    ``jobs > 1`` compiles the source as ``jobs`` parts in parallel (``-DPKD_PARTS``: the kernels
    dealt round-robin within their translation-unit classes, the dispatch code in part 0) and links
    them: the same library, built about ``jobs`` times faster.  A source whose kernels cannot share
    one translation unit (:func:`min_parts` > 1) is always compiled in at least that many parts."""
    source = Path(source)
    need = required_arch(source)
    if need is not None and arch != need:
        raise ValueError(f"{source} holds kernels that need {need} (CUTLASS 3.x, TMA + wgmma): build it with "
                         f"--arch {need}, not {arch}")
    target = Path(out) if out else source.with_name(source.stem + f"_{arch}" + (".o" if compile_only else ".so"))
    target.parent.mkdir(parents=True, exist_ok=True)
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: must be >= 1")
    parts = min_parts(source)
    if parts > 1 and compile_only:
        raise ValueError(f"{source} must be compiled as {parts} translation units at least: no single object")
    if jobs < parts:
        _LOG.info("%s: compiling %d parts (its kernels cannot share one translation unit)", source, parts)
        jobs = parts
    if jobs == 1 or compile_only:
        _run_nvcc(nvcc_compile_command(arch, source, target, shared=not compile_only, runtime_dir=source.parent),
                  source, arch)
        return target
    from concurrent.futures import ThreadPoolExecutor

    objs = [target.with_name(f"{target.stem}.part{i}of{jobs}.o") for i in range(jobs)]
    cmds = [nvcc_compile_command(arch, source, o, runtime_dir=source.parent) + [f"-DPKD_PARTS={jobs}", f"-DPKD_PART={i}"]
            for i, o in enumerate(objs)]
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda c: _run_nvcc(c, source, arch), cmds))
    _run_nvcc(nvcc_link_command([arch], objs, target), source, arch)
    for o in objs:
        o.unlink()
    return target


def _run_nvcc(cmd: Sequence[str], source: Path, arch: str) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed for {source} ({arch}):\n{proc.stderr[-4000:]}")


class Dispatcher:
    """ctypes binding of a built dispatcher library."""

    def __init__(self, library: str | Path) -> None:
        self.lib = ctypes.CDLL(str(Path(library).resolve()))
        i64p = ctypes.POINTER(ctypes.c_int64)
        #: the model keys (families and choices, :mod:`predictor.model_key`) the library dispatches
        self.families: list[Key] = [k for k in all_keys() if hasattr(self.lib, f"pkd_conv2d_{k.identifier}")]
        self._fns: dict[tuple[str, Any], Any] = {}
        for f in self.families:
            v = f.identifier
            getattr(self.lib, f"pkd_select_{v}").argtypes = [i64p, ctypes.c_int64]
            getattr(self.lib, f"pkd_select_{v}").restype = ctypes.c_int
            getattr(self.lib, f"pkd_name_{v}").argtypes = [ctypes.c_int]
            getattr(self.lib, f"pkd_name_{v}").restype = ctypes.c_char_p
            getattr(self.lib, f"pkd_num_configs_{v}").argtypes = []
            getattr(self.lib, f"pkd_num_configs_{v}").restype = ctypes.c_int
            getattr(self.lib, f"pkd_workspace_bytes_{v}").argtypes = [i64p, ctypes.c_int64]
            getattr(self.lib, f"pkd_workspace_bytes_{v}").restype = ctypes.c_size_t
            for what in ("conv2d", "conv2d_tuned"):
                fn = getattr(self.lib, f"pkd_{what}_{v}", None)  # libraries built before tuning lack it
                if fn is None:
                    continue
                fn.argtypes = [i64p, ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_float] * 2 + [
                    ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
                fn.restype = ctypes.c_int
            if hasattr(self.lib, f"pkd_candidates_{v}"):
                getattr(self.lib, f"pkd_candidates_{v}").argtypes = [i64p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int)]
                getattr(self.lib, f"pkd_candidates_{v}").restype = ctypes.c_int
                getattr(self.lib, f"pkd_tuned_pick_{v}").argtypes = [i64p, ctypes.c_int64]
                getattr(self.lib, f"pkd_tuned_pick_{v}").restype = ctypes.c_int
                getattr(self.lib, f"pkd_tune_clear_{v}").argtypes = []
                getattr(self.lib, f"pkd_tune_clear_{v}").restype = None

    @staticmethod
    def _shape(shape: Sequence[int]) -> Any:
        if len(shape) != 10:
            raise ValueError("shape must be N, C, H, W, K, R, S, stride, pad, dilation")
        return (ctypes.c_int64 * 10)(*[int(v) for v in shape])

    def _fn(self, what: str, family: str | Key) -> Any:
        """The C ABI function ``pkd_<what>_<identifier>`` of a held family or choice (cached)."""
        try:
            return self._fns[what, family]
        except KeyError:
            pass
        key = model_key(family)
        if key not in self.families:
            raise ValueError(f"the dispatcher holds {[k.value for k in self.families]}, not {key.value}")
        fn = getattr(self.lib, f"pkd_{what}_{key.identifier}", None)
        if fn is None:
            raise ValueError(f"the dispatcher has no pkd_{what}_{key.identifier} (built before first-call tuning: "
                             "regenerate and rebuild it)")
        self._fns[what, family] = fn
        return fn

    def select(self, family: str | Key, shape: Sequence[int], sms: int) -> int:
        """Index of the config the library's model picks (negative: :class:`~predictor.codegen.ResultCode`)."""
        return int(self._fn("select", family)(self._shape(shape), sms))

    def name(self, family: str | Key, index: int) -> str | None:
        raw = self._fn("name", family)(index)
        return raw.decode() if raw else None

    def num_configs(self, family: str | Key) -> int:
        """How many configs (kernels) the library holds for ``family``."""
        return int(self._fn("num_configs", family)())

    def config_names(self, family: str | Key) -> list[str]:
        """The names of ``family``'s configs, by index (what :meth:`select` returns)."""
        return [str(self.name(family, i)) for i in range(self.num_configs(family))]

    def workspace_bytes(self, family: str | Key, shape: Sequence[int], sms: int) -> int:
        return int(self._fn("workspace_bytes", family)(self._shape(shape), sms))

    def candidates(self, family: str | Key, shape: Sequence[int], sms: int) -> list[int] | int:
        """Indices of the first-call tuning candidates (the static pick first), or the negative result."""
        out = (ctypes.c_int * 3)()
        n = int(self._fn("candidates", family)(self._shape(shape), sms, out))
        return list(out[:n]) if n > 0 else n

    def tuned_pick(self, family: str | Key, shape: Sequence[int], sms: int) -> int:
        """The cached winner of first-call tuning for this problem, or -1 (not tuned yet)."""
        return int(self._fn("tuned_pick", family)(self._shape(shape), sms))

    def tune_clear(self, family: str | Key) -> None:
        """Forget every cached winner of first-call tuning of ``family``."""
        self._fn("tune_clear", family)()

    def conv2d(self, family: str | Key, shape: Sequence[int], sms: int, x: int, w: int, y: int, alpha: float,
               beta: float, workspace: int, workspace_bytes: int, stream: int, tuned: bool = False) -> tuple[int, int]:
        """Run one convolution; returns (status, index of the config that ran).  ``tuned``: through
        ``pkd_conv2d_tuned_<family>`` (first-call tuning, module docstring)."""
        chosen = ctypes.c_int(-99)
        st = self._fn("conv2d_tuned" if tuned else "conv2d", family)(self._shape(shape), sms, x, w, y, alpha, beta,
                                                       workspace or None, workspace_bytes, stream or None,
                                                       ctypes.byref(chosen))
        return int(st), int(chosen.value)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m predictor.dispatcher",
                                description="Generate and build the CUTLASS conv2d dispatcher of a trained model.")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write export/dispatch/<slug>_dispatch.cu and CMakeLists.txt")
    g.add_argument("--models-dir", default="models", help="folder of the <slug>-<family>.tree.json models")
    g.add_argument("--slug", default="h200", help="model slug (models/<slug>-<family>.tree.json)")
    g.add_argument("--export-dir", default="export",
                   help="folder of the exported header <slug>_conv_heuristics.hpp; the dispatcher goes to its "
                        "dispatch/ (SM80 families) or dispatch_sm90/ (SM90 families) subfolder")
    g.add_argument("--family", action="append", default=None, type=cli_model_key, metavar="FAMILY",
                   help="model keys to dispatch (default: the SM80-family ones, buildable for sm_87 and sm_90): "
                        + CLI_HELP)
    g.add_argument("--out-dir", default=None,
                   help="folder of the generated dispatcher (default: <export-dir>/dispatch, or dispatch_sm90 "
                        "when a family needs sm_90a; the shipped choices' are export/dispatch_f16_choice and dispatch_f16_choice3)")
    b = sub.add_parser("build", help="compile the generated dispatcher with nvcc")
    b.add_argument("source", help="the generated <slug>_dispatch.cu")
    b.add_argument("--arch", default="sm_90", choices=known_arches(),
                   help="nvcc target (SM90-family dispatchers: sm_90a only)")
    b.add_argument("--out", default=None, help="output library (default: next to the source, <stem>_<arch>.so)")
    b.add_argument("--compile-only", action="store_true", help="compile to an object file, do not link")
    b.add_argument("--jobs", type=int, default=1,
                   help="compile the source as this many parts in parallel, then link (default 1)")
    return p


def _main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cmd == "generate":
        from .cli import require

        require("cutlass_library", "build", "generating a dispatcher")
        generate(args.models_dir, args.slug, args.export_dir, args.out_dir, families=args.family)
    else:
        _LOG.info("built %s", build(args.source, args.arch, args.out, args.compile_only, args.jobs))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; unusable input ends in one line on stderr (exit 2)."""
    return run_main("predictor.dispatcher", _main, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
