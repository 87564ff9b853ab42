"""Logs composed for the Slack tests (not pasted from issue threads), with the entry each should name."""

SHM_BUS_ERROR = """\
Epoch 0:   3%|▎         | 41/1250 [00:19<09:31,  2.11it/s]
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1133, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
  File "/opt/conda/lib/python3.11/site-packages/torch/utils/_utils/signal_handling.py", line 67, in handler
    _error_if_any_worker_fails()
RuntimeError: DataLoader worker (pid 4177) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.
"""
SHM_ENTRY = "dataloader-worker-bus-error-shm"

HOST_OOM = """\
[2026-11-30 02:14:09] step 18200 loss 2.113 lr 2.4e-4
Traceback (most recent call last):
  File "train.py", line 212, in <module>
    for batch in loader:
  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1329, in _next_data
    idx, data = self._get_data()
RuntimeError: DataLoader worker (pid 91822) is killed by signal: Killed.
"""
OOM_ENTRY = "dataloader-worker-killed-host-oom"

NO_MATCH = """\
Traceback (most recent call last):
  File "score.py", line 12, in <module>
    main()
  File "score.py", line 9, in main
    print(totals["validation"])
KeyError: 'validation'
"""

WITH_SECRET = SHM_BUS_ERROR + "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123\n"
