"""First-call tuning through a built dispatcher (``pkd_conv2d_tuned_<family>``), on a GPU with
``PREDICTOR_DISPATCHER=<built dispatcher .so>`` (skipped otherwise): the tuned result equals the
static one, the cached winner is a candidate, ``beta != 0`` is right, and a CUDA-graph capture never
tunes."""
from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not (torch.cuda.is_available() and os.environ.get("PREDICTOR_DISPATCHER")),
    reason="needs a GPU and PREDICTOR_DISPATCHER=<built dispatcher .so>")]

SHAPES = [(8, 256, 56, 56, 256, 3, 3, 1, 1, 1), (32, 64, 56, 56, 64, 3, 3, 1, 1, 1), (8, 512, 28, 28, 128, 1, 1, 1, 0, 1),
          (1, 128, 112, 112, 128, 3, 3, 2, 1, 1), (16, 1024, 14, 14, 256, 1, 1, 1, 0, 1), (8, 64, 224, 224, 64, 3, 3, 1, 1, 1),
          (4, 256, 64, 64, 512, 3, 3, 1, 1, 1), (32, 512, 7, 7, 2048, 1, 1, 1, 0, 1)]


@pytest.fixture(scope="module")
def disp():
    from predictor.dispatcher import Dispatcher

    return Dispatcher(os.environ["PREDICTOR_DISPATCHER"])


@pytest.fixture(scope="module")
def fam(disp) -> str:
    fams = [f.value for f in disp.families if f.value.startswith("f16")]
    if not fams:
        pytest.skip("the dispatcher holds no fp16 NHWC family")
    return fams[0]


def sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def tensors(shape, seed: int = 0):
    """NHWC input, KRSC filter, NPQK output (fp16, zeros), workspace."""
    n, c, h, w, k, r, s, stride, pad, dil = shape
    p = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
    q = (w + 2 * pad - dil * (s - 1) - 1) // stride + 1
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16, generator=g)
    wt = torch.randn(k, r, s, c, device="cuda", dtype=torch.float16, generator=g) / (c * r * s) ** 0.5
    y = torch.zeros(n, p, q, k, device="cuda", dtype=torch.float16)
    return x, wt, y


def reference(shape, x, wt):
    n, c, h, w, k, r, s, stride, pad, dil = shape
    out = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2).float(), wt.permute(0, 3, 1, 2).float(), stride=stride,
                                     padding=pad, dilation=dil)
    return out.permute(0, 2, 3, 1)


def run(disp, fam, shape, x, wt, y, alpha=1.0, beta=0.0, tuned=False, stream=None):
    need = disp.workspace_bytes(fam, shape, sms())
    ws = torch.empty(max(need, 1), dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream if stream is None else stream
    st, idx = disp.conv2d(fam, shape, sms(), x.data_ptr(), wt.data_ptr(), y.data_ptr(), alpha, beta, ws.data_ptr(),
                          need, stream, tuned=tuned)
    return st, idx, ws


def multi_candidate_shapes(disp, fam):
    out = [s for s in SHAPES if isinstance(disp.candidates(fam, s, sms()), list) and len(disp.candidates(fam, s, sms())) > 1]
    assert out, "no test shape lands in a leaf with several candidates"
    return out


def close(a, b, tol=2e-2) -> bool:
    return float((a.float() - b.float()).norm() / max(float(b.float().norm()), 1e-6)) < tol


def test_tuned_equals_static_and_caches_a_candidate(disp, fam) -> None:
    disp.tune_clear(fam)
    for shape in multi_candidate_shapes(disp, fam):
        cands = disp.candidates(fam, shape, sms())
        assert cands[0] == disp.select(fam, shape, sms())
        x, wt, y_static = tensors(shape)
        st, idx_static, _ = run(disp, fam, shape, x, wt, y_static)
        assert st == 0 and idx_static == cands[0]
        assert disp.tuned_pick(fam, shape, sms()) == -1
        y_tuned = torch.zeros_like(y_static)
        st, idx, _ = run(disp, fam, shape, x, wt, y_tuned, tuned=True)
        torch.cuda.synchronize()
        assert st == 0 and idx in cands and disp.tuned_pick(fam, shape, sms()) == idx
        assert close(y_tuned, y_static) and close(y_tuned, reference(shape, x, wt))
        y_again = torch.zeros_like(y_static)
        st, idx2, _ = run(disp, fam, shape, x, wt, y_again, tuned=True)
        torch.cuda.synchronize()
        assert st == 0 and idx2 == idx and torch.equal(y_again, y_tuned)


def takes_source(disp, fam, index: int) -> bool:
    """Whether config ``index`` reads the output's old values (``beta != 0``; ``KernelConfig.no_source``)."""
    from predictor.config import KernelConfig

    return not KernelConfig.from_name(disp.name(fam, index)).no_source


def source_shapes(disp, fam):
    """The test shapes of several candidates, at least one of which takes a source (``beta != 0``)."""
    return [s for s in multi_candidate_shapes(disp, fam)
            if any(takes_source(disp, fam, i) for i in disp.candidates(fam, s, sms()))]


def test_beta_is_applied_once(disp, fam) -> None:
    """``beta != 0``: the tuned call applies it once and caches one of the leaf's candidates that take a source
    (the others cannot run it)."""
    disp.tune_clear(fam)
    shapes = source_shapes(disp, fam)
    assert shapes, "no test shape lands in a leaf with several candidates, one of which takes a source"
    shape = shapes[0]
    x, wt, y = tensors(shape, seed=1)
    y0 = torch.randn(y.shape, device="cuda", dtype=torch.float16)
    want = 0.5 * reference(shape, x, wt) + 0.75 * y0.float()
    y_static = y0.clone()
    assert run(disp, fam, shape, x, wt, y_static, 0.5, 0.75)[0] == 0
    y_tuned = y0.clone()
    st, idx, _ = run(disp, fam, shape, x, wt, y_tuned, 0.5, 0.75, tuned=True)  # tunes: several runs
    torch.cuda.synchronize()
    assert st == 0 and disp.tuned_pick(fam, shape, sms()) == idx
    assert idx in disp.candidates(fam, shape, sms()) and takes_source(disp, fam, idx)
    assert close(y_tuned, want) and close(y_tuned, y_static)


def test_beta_on_a_leaf_of_sourceless_kernels(disp, fam) -> None:
    """A leaf whose candidates all lack a source (faster at ``beta = 0``) cannot run ``beta != 0``: the static and
    tuned calls both fall back to a config that takes one, apply ``beta`` once, and cache no winner."""
    disp.tune_clear(fam)
    shapes = [s for s in SHAPES if not any(takes_source(disp, fam, i) for i in disp.candidates(fam, s, sms()))]
    if not shapes:
        pytest.skip(f"no test shape lands in a leaf of {fam} whose candidates all lack a source")
    shape = shapes[0]
    x, wt, y = tensors(shape, seed=4)
    y0 = torch.randn(y.shape, device="cuda", dtype=torch.float16)
    want = 0.5 * reference(shape, x, wt) + 0.75 * y0.float()
    for tuned in (False, True):
        out = y0.clone()
        st, idx, _ = run(disp, fam, shape, x, wt, out, 0.5, 0.75, tuned=tuned)
        torch.cuda.synchronize()
        assert st == 0 and takes_source(disp, fam, idx) and close(out, want)
    assert disp.tuned_pick(fam, shape, sms()) == -1


def test_capture_never_tunes(disp, fam) -> None:
    disp.tune_clear(fam)
    shape = multi_candidate_shapes(disp, fam)[0]
    x, wt, y = tensors(shape, seed=2)
    need = disp.workspace_bytes(fam, shape, sms())
    ws = torch.empty(max(need, 1), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    chosen = []
    with torch.cuda.graph(g):
        stream = torch.cuda.current_stream().cuda_stream
        chosen.append(disp.conv2d(fam, shape, sms(), x.data_ptr(), wt.data_ptr(), y.data_ptr(), 1.0, 0.0,
                                  ws.data_ptr(), need, stream, tuned=True))
    assert chosen[0] == (0, disp.select(fam, shape, sms()))  # not tuned yet: the static pick
    assert disp.tuned_pick(fam, shape, sms()) == -1
    g.replay()
    torch.cuda.synchronize()
    assert close(y, reference(shape, x, wt))
    # tuned eagerly, a later capture runs the cached winner
    st, idx, _ = run(disp, fam, shape, x, wt, torch.zeros_like(y), tuned=True)
    assert st == 0 and disp.tuned_pick(fam, shape, sms()) == idx
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        stream = torch.cuda.current_stream().cuda_stream
        chosen.append(disp.conv2d(fam, shape, sms(), x.data_ptr(), wt.data_ptr(), y.data_ptr(), 1.0, 0.0,
                                  ws.data_ptr(), need, stream, tuned=True))
    assert chosen[1] == (0, idx)


#: An fp16 1x1 layer (DeepLabV3-MobileNetV3 at 1024x2048, N=32: a 2 GiB output) that no SM80 fp16 kernel
#: can implement (measured: every f16nhwc config cannot_implement), which the choice models still pick.
TOO_BIG_FOR_SM80 = (32, 16, 512, 1024, 64, 1, 1, 1, 0, 1)


def only_sm80_fp16(disp, fam) -> bool:
    return all(n.startswith("f16nhwc_") for n in disp.config_names(fam))


def member_picks(disp, fam, shape) -> list[int]:
    """The dispatcher's table indices of the own picks of ``fam``'s member families that ship a model of their own
    (the shipped ``h200`` models, which the dispatcher was generated from), in family order, where it holds them."""
    import predictor
    from predictor.model_key import model_key
    from predictor.resources import models_dir

    members = model_key(fam).families
    if len(members) < 2:
        return []
    names = disp.config_names(fam)
    n, c, h, w, k, r, s, stride, pad, dil = shape
    picks = [predictor.select(n, c, h, w, k, r, s, stride=stride, pad=pad, dilation=dil, family=m.value, sms=sms()).name
             for m in members if (models_dir() / f"h200-{m.value}.tree.json").is_file()]
    return [names.index(p) for p in picks if p in names]


def test_fallback_runs_the_leafs_next_candidate(disp, fam) -> None:
    """When the pick cannot implement the problem, the leaf's next candidate that can runs, then (a choice) its
    members' own picks, then the rest of the table: the models' next choices, not the first kernel in table order."""
    shape = TOO_BIG_FOR_SM80
    if only_sm80_fp16(disp, fam):
        pytest.skip(f"{fam} holds only SM80 fp16 kernels, none of which can run it")
    cands = disp.candidates(fam, shape, sms())
    names = [disp.name(fam, i) for i in cands]
    if not names[0].startswith("f16nhwc_"):
        pytest.skip(f"{fam} picks {names[0]} here, which can run it")
    x, wt, y = tensors(shape, seed=3)
    st, idx, _ = run(disp, fam, shape, x, wt, y)
    torch.cuda.synchronize()
    assert st == 0 and idx != cands[0]
    # SM90 kernels take any size: the leaf's first of them, else the members' picks', else the table's first
    table = disp.config_names(fam)
    order = list(dict.fromkeys([*cands, *member_picks(disp, fam, shape), *range(len(table))]))
    runnable = [i for i in order if not table[i].startswith("f16nhwc_")]
    assert idx == runnable[0]
    assert close(y, reference(shape, x, wt))


def test_no_kernel_that_runs_it_is_a_clean_refusal(disp, fam) -> None:
    """A dispatcher whose kernels all refuse the problem (SM80 fp16 only, a 2 GiB output) answers
    ``NO_KERNEL`` with the pick in ``*chosen`` and leaves the output untouched."""
    from predictor.codegen import ResultCode

    if not only_sm80_fp16(disp, fam):
        pytest.skip(f"{fam} holds kernels beside SM80 fp16 ones")
    shape = TOO_BIG_FOR_SM80
    x, wt, y = tensors(shape, seed=3)
    y.fill_(1.5)
    st, idx, _ = run(disp, fam, shape, x, wt, y)
    torch.cuda.synchronize()
    assert st == ResultCode.NO_KERNEL and idx == disp.select(fam, shape, sms())
    assert bool((y == 1.5).all())
