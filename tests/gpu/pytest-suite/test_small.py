# tests/gpu/pytest-suite/test_small.py - a small CUDA test suite for
# `gpureduce hunt --time-tests -- python3 -m pytest tests/gpu/pytest-suite`
# (issue 28 item 3: time per test under hunt's capture beside the plain
# run).  Every test is clean: hunt must find nothing, and print each test's
# seconds in both runs.  Run by hand or by tests/gpu scripts on a GPU
# machine with torch and pytest.
import torch


def test_matmul():
    a = torch.randn(512, 512, device="cuda")
    for _ in range(20):
        a = (a @ a).tanh()
    torch.cuda.synchronize()


def test_softmax_rows():
    x = torch.randn(2048, 1024, device="cuda")
    y = x.softmax(-1)
    assert torch.allclose(y.sum(-1), torch.ones(2048, device="cuda"), atol=1e-4)


def test_elementwise_loop():
    x = torch.ones(1 << 16, device="cuda")
    for _ in range(200):
        x = x * 1.0001 + 0.5
    torch.cuda.synchronize()


def test_host_copies():
    for i in range(50):
        t = torch.full((4096,), float(i)).cuda()
        assert float(t[0]) == float(i)
