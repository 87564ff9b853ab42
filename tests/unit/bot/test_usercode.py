"""The plain-bug detector: innermost frame in the user's file, no platform signal in the chain."""

from bot.usercode import is_library, tracebacks, usage_error, user_frame

KEYERROR_IN_DATASET = """\
Epoch 0:   3%|▎         | 12/400 [00:04<02:11,  2.95it/s]
Traceback (most recent call last):
  File "/home/ana/proj/train.py", line 112, in <module>
    main()
  File "/home/ana/proj/train.py", line 88, in main
    for batch in loader:
  File "/home/ana/proj/data.py", line 41, in __getitem__
    return {"x": row["text"], "y": row["label"]}
KeyError: 'label'
"""

LIBRARY_INNERMOST = """\
Traceback (most recent call last):
  File "/home/ana/proj/train.py", line 88, in main
    out = model(x)
  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl
    return forward_call(*args, **kwargs)
  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 768x10)
"""

DATALOADER_WORKER = """\
Traceback (most recent call last):
  File "/workspace/train.py", line 57, in <module>
    for step, batch in enumerate(loader):
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 701, in __next__
    data = self._next_data()
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 1465, in _next_data
    return self._process_data(data)
  File "/usr/local/lib/python3.10/dist-packages/torch/_utils.py", line 733, in reraise
    raise exception
KeyError: Caught KeyError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/worker.py", line 349, in _worker_loop
    data = fetcher.fetch(index)
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/fetch.py", line 52, in fetch
    data = [self.dataset[idx] for idx in possibly_batched_index]
  File "/workspace/mydata/dataset.py", line 23, in __getitem__
    label = self.labels[sample_id]
KeyError: 'img_00042'
"""

MULTI_RANK = """\
[rank1]: Traceback (most recent call last):
[rank0]: Traceback (most recent call last):
[rank1]:   File "/job/run_clm.py", line 201, in <module>
[rank0]:   File "/job/run_clm.py", line 201, in <module>
[rank1]:     trainer.train(resume_from_checkpoint=args.resume)
[rank0]:     trainer.train(resume_from_checkpoint=args.resume)
[rank1]:   File "/job/run_clm.py", line 150, in collate
[rank0]:   File "/job/run_clm.py", line 150, in collate
[rank1]:     lengths = [len(f["input_ids"]) for f in featurs]
[rank0]:     lengths = [len(f["input_ids"]) for f in featurs]
[rank1]: NameError: name 'featurs' is not defined
[rank0]: NameError: name 'featurs' is not defined
E1202 10:11:12.000000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 4242) of binary: /usr/bin/python
Traceback (most recent call last):
  File "/usr/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/usr/lib/python3/dist-packages/torch/distributed/run.py", line 883, in run
    elastic_launch(
  File "/usr/lib/python3/dist-packages/torch/distributed/launcher/api.py", line 263, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
"""

CHAINED_INFRA_CAUSE = """\
Traceback (most recent call last):
  File "/app/train.py", line 30, in setup
    torch.cuda.set_device(local_rank)
RuntimeError: CUDA error: invalid device ordinal
CUDA kernel errors might be asynchronously reported at some other API call.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/train.py", line 34, in setup
    raise ValueError(f"bad rank {local_rank}") from None
ValueError: bad setup
"""

CUDA_MESSAGE_FROM_USER_CODE = """\
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    assert torch.cuda.is_available(), "CUDA is not available on this node"
AssertionError: CUDA is not available on this node
"""

IMPORT_ERROR = """\
Traceback (most recent call last):
  File "/srv/train.py", line 3, in <module>
    import flash_attn
ModuleNotFoundError: No module named 'flash_attn'
"""


def test_keyerror_in_the_users_dataset_names_the_frame():
    frame = user_frame(KEYERROR_IN_DATASET)
    assert frame is not None
    assert (frame.file, frame.line, frame.function) == ("/home/ana/proj/data.py", 41, "__getitem__")
    assert (frame.exception, frame.message) == ("KeyError", "'label'")
    assert frame.headline() == "data.py:41, KeyError: 'label'"


def test_an_exception_raised_inside_a_library_is_not_user_code():
    assert user_frame(LIBRARY_INNERMOST) is None


def test_dataloader_reraise_uses_the_worker_traceback():
    frame = user_frame(DATALOADER_WORKER)
    assert frame is not None
    assert (frame.file, frame.line, frame.exception, frame.message) == ("/workspace/mydata/dataset.py", 23, "KeyError", "'img_00042'")


def test_multi_rank_prefixed_tracebacks_are_read_one_rank_at_a_time():
    frame = user_frame(MULTI_RANK)
    assert frame is not None
    assert (frame.file, frame.line, frame.function, frame.exception) == ("/job/run_clm.py", 150, "collate", "NameError")
    assert len(tracebacks(MULTI_RANK)) == 1  # rank 0's copy is not mixed into rank 1's frames


def test_a_platform_error_anywhere_in_the_chain_is_not_user_code():
    assert len(tracebacks(CHAINED_INFRA_CAUSE)) == 2
    assert user_frame(CHAINED_INFRA_CAUSE) is None


def test_platform_words_or_types_in_the_exception_are_not_user_code():
    assert user_frame(CUDA_MESSAGE_FROM_USER_CODE) is None
    assert user_frame(IMPORT_ERROR) is None


def test_no_traceback_no_frame():
    assert user_frame("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nall good") is None
    assert user_frame("KeyError: 'label'") is None  # an exception line without frames says nothing of where


def test_library_paths():
    for path in (
        "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py",
        "/opt/conda/lib/python3.11/concurrent/futures/thread.py",
        "<frozen runpy>",
        "/workspace/Megatron-LM/megatron/core/parallel_state.py",
        r"C:\Python310\lib\site-packages\transformers\trainer.py",
    ):
        assert is_library(path), path
    for path in ("train.py", "/home/ana/proj/data.py", "/workspace/mydata/dataset.py", r"C:\work\train.py"):
        assert not is_library(path), path


USAGE_REFUSAL = """\
$ torchrun --nproc_per_node 2 finetune.py --model m --epoch 3
[rank1]: usage: finetune.py [-h] --model MODEL [--epochs EPOCHS]
[rank1]: finetune.py: error: unrecognized arguments: --epoch 3
"""


def test_an_argparse_refusal_is_a_command_line_mistake():
    frame = usage_error(USAGE_REFUSAL)
    assert frame is not None and frame.kind == "usage"
    assert (frame.file, frame.line, frame.message) == ("finetune.py", 0, "unrecognized arguments: --epoch 3")
    assert frame.headline() == "finetune.py, usage error: unrecognized arguments: --epoch 3"
    assert frame.where == "finetune.py"


def test_an_error_line_without_its_programs_usage_line_is_not_a_refusal():
    assert usage_error("train.py: error: unrecognized arguments: --x\n") is None
    assert usage_error("usage: other.py [-h]\ntrain.py: error: unrecognized arguments: --x\n") is None
    # the usage line must come before the error line it explains
    assert usage_error("train.py: error: bad\nusage: train.py [-h]\n") is None
