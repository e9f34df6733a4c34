# Sourced by the device scripts (run from the repo root on the GPU machine, which has no network):
# installs the carried nvidia-cutlass wheel from .whl/ if present and puts it and the repo on PYTHONPATH.
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || return 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
