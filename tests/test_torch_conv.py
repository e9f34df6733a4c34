"""The PyTorch path's shape handling (CPU; torch optional) and, on a GPU with a built dispatcher
(``PREDICTOR_DISPATCHER=<.so>``), the custom op against cuDNN."""
from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

from predictor import torch_conv  # noqa: E402


@pytest.mark.parametrize("kw, want", [
    (dict(kernel_size=3, padding=1), (1, 1, 1)),
    (dict(kernel_size=3, stride=2, padding=1), (2, 1, 1)),
    (dict(kernel_size=3, padding="same", dilation=2), (1, 2, 2)),
    (dict(kernel_size=1), (1, 0, 1)),
    (dict(kernel_size=5, padding="valid"), (1, 0, 1)),
])
def test_conv_params(kw: dict, want: tuple) -> None:
    assert torch_conv.conv_params(torch.nn.Conv2d(16, 32, **kw)) == want


@pytest.mark.parametrize("kw, msg", [
    (dict(kernel_size=3, groups=4), "groups=4"),
    (dict(kernel_size=(1, 7), padding=(0, 3)), "padding=(0, 3) is not square"),
    (dict(kernel_size=3, stride=(1, 2)), "stride=(1, 2) is not square"),
    (dict(kernel_size=3, padding=1, padding_mode="reflect"), "padding_mode='reflect'"),
    (dict(kernel_size=2, padding="same"), "even or non-square"),
])
def test_conv_params_refuses(kw: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        torch_conv.conv_params(torch.nn.Conv2d(16, 32, **kw))


def test_problem_matches_torch_output_size() -> None:
    conv = torch.nn.Conv2d(8, 24, 3, stride=2, padding=2, dilation=2)
    x = torch.zeros(2, 8, 17, 23)
    p = torch_conv.problem(x.shape, conv.weight.shape, *torch_conv.conv_params(conv))
    assert tuple(conv(x).shape) == (p.N, p.K, p.P, p.Q)
    with pytest.raises(ValueError, match="filter has C=8, input has C=9"):
        torch_conv.problem((1, 9, 8, 8), conv.weight.shape, 1, 0, 1)


def test_convert_needs_a_loaded_dispatcher() -> None:
    with pytest.raises(ValueError, match="no dispatcher loaded for family 'f16nhwc'"):
        torch_conv.convert(torch.nn.Conv2d(8, 8, 3), "f16nhwc")


def _fp16_family(fams) -> str:
    """The dispatcher's first fp16 family (the op is compared with cuDNN's fp16 conv); skip an int8-only one."""
    fam = next((f for f in fams if "f16" in f), None)
    if fam is None:
        pytest.skip("the dispatcher holds no fp16 family")
    return fam


@pytest.mark.gpu
@pytest.mark.skipif(not (torch.cuda.is_available() and os.environ.get("PREDICTOR_DISPATCHER")),
                    reason="needs a GPU and PREDICTOR_DISPATCHER=<built dispatcher .so>")
def test_op_matches_cudnn_and_captures_in_a_graph() -> None:
    fams = torch_conv.load(os.environ["PREDICTOR_DISPATCHER"])
    fam = _fp16_family(fams)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(128, 64, 1, stride=2, bias=False))
    net = net.half().cuda().eval().to(memory_format=torch.channels_last)
    x = torch.randn(4, 64, 40, 40, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        ref = net(x)
        rep = torch_conv.convert(net, fam, example_input=x)
        assert rep.converted == ["0", "2"]
        out = net(x)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            gout = net(x)
        g.replay()
        torch.cuda.synchronize()
    err = float((out.float() - ref.float()).norm() / ref.float().norm())
    assert err < 1e-2
    assert torch.equal(gout, out)


def test_op_schema_has_the_tuned_flag() -> None:
    """``tuned`` defaults to False (the static pick); the fake implementation takes it (no GPU needed)."""
    torch_conv._define_op()
    schema = str(torch.ops.predictor.conv2d.default._schema)
    assert "bool tuned=False" in schema
    x = torch.empty(2, 16, 9, 9, device="meta")
    w = torch.empty(32, 16, 3, 3, device="meta")
    for args in ((), (True,)):
        y = torch.ops.predictor.conv2d(x, w, 2, 1, 1, "f16nhwc", 132, *args)
        assert tuple(y.shape) == (2, 32, 5, 5)


@pytest.mark.gpu
@pytest.mark.skipif(not (torch.cuda.is_available() and os.environ.get("PREDICTOR_DISPATCHER")),
                    reason="needs a GPU and PREDICTOR_DISPATCHER=<built dispatcher .so>")
def test_tuned_op_matches_the_static_op_and_captures() -> None:
    fams = torch_conv.load(os.environ["PREDICTOR_DISPATCHER"])
    fam = _fp16_family(fams)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(128, 64, 1, stride=2, bias=False))
    net = net.half().cuda().eval().to(memory_format=torch.channels_last)
    x = torch.randn(4, 64, 40, 40, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        ref = net(x)
        rep = torch_conv.convert(net, fam, example_input=x, tuned=True)
        assert rep.converted == ["0", "2"] and all(m.tuned for m in net if hasattr(m, "tuned"))
        out = net(x)  # first call: tunes
        again = net(x)  # cached winners
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            gout = net(x)
        g.replay()
        torch.cuda.synchronize()
    err = float((out.float() - ref.float()).norm() / ref.float().norm())
    assert err < 1e-2
    assert torch.equal(again, out) and torch.equal(gout, out)
