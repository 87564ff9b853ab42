"""The bundled knowledge base passes the whole `traindoc kb lint` and answers the seed cases."""


from bot.ingest import report_from_text
from bot.kb_checks import ranking_problems
from index.scanner import hyperscan_rejects
from kb.lint import cross_entry_problems, healthy_logs, healthy_problems, static_problems
from kb.load import load_kb
from kb.schema import CATEGORIES


def test_static_lint_is_clean():
    kb = load_kb()
    assert static_problems(kb) == []
    assert len(kb.entries) >= 189
    assert {e.category for e in kb.entries} == set(CATEGORIES)


def test_no_strong_failure_fingerprint_matches_a_healthy_log():
    assert healthy_problems(load_kb(), healthy_logs()) == []


def test_no_strong_fingerprint_matches_another_entrys_sample():
    assert cross_entry_problems(load_kb()) == []


def test_every_pattern_compiles_in_hyperscan_too():
    rejected = [
        (e.id, p)
        for e in load_kb().entries
        for p in [f.pattern for f in e.fingerprints] + list(e.requires) + list(e.excludes)
        if hyperscan_rejects(p) is not None
    ]
    assert rejected == []


def test_every_entry_is_complete_enough_to_answer_from():
    for e in load_kb().entries:
        assert len(e.samples) >= 2 and e.questions and e.references and e.fix and e.confirm, e.id


def test_every_sample_ranks_its_own_entry_first(bundled_engine):
    assert [str(p) for p in ranking_problems(bundled_engine)] == []


def test_seed_question_and_log_line(bundled_engine):
    d = bundled_engine.diagnose(report_from_text("why does dcp.save hang at 64 GPUs?"))
    assert d.results[0].id == "roce-qp-timeout-during-checkpoint-save"
    log = (
        "[rank0]:[I1202 03:11:40.118301 212 torch/distributed/checkpoint/logger.py:41] Saving checkpoint step_4000\n"
        "gpu-node03:48211:49012 [1] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110\n"
        '[rank9]:   File "/usr/lib/python3/dist-packages/torch/distributed/checkpoint/state_dict_saver.py", line 150, in save\n'
    )
    d = bundled_engine.diagnose(report_from_text(log))
    assert d.verdict == "match" and d.results[0].id == "roce-qp-timeout-during-checkpoint-save"
    assert d.results[0].why.fingerprints[0].line == 2


def test_off_topic_input_abstains(bundled_engine):
    for text in (
        "how do I configure nginx rate limiting for my API?",
        "ActionController::RoutingError (No route matches [GET] \"/favicon.ico\"):\n  actionpack (7.1.2) lib/action_dispatch/middleware/debug_exceptions.rb:61:in `call'",
    ):
        d = bundled_engine.diagnose(report_from_text(text))
        assert d.verdict == "abstain", (text, d.results[0].id, d.confidence)
        assert len(d.results) >= 3  # the nearest entries are still listed


def test_a_clear_error_in_a_noisy_log_is_answered(bundled_engine):
    log = (
        "W1202 10:00:01.123000 140 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
        "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...\n"
        "{'loss': 2.1932, 'grad_norm': 1.82, 'learning_rate': 4.9e-05, 'epoch': 0.12}\n"
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/app/train.py", line 140, in <module>\n'
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 39.39 GiB of which 1.02 GiB is free.\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    d = bundled_engine.diagnose(report_from_text(log))
    assert d.verdict == "match" and d.results[0].id == "cuda-oom-activations-batch-too-large"
    assert d.triage is not None and d.triage.initiating.rank == 1


def test_every_benign_entrys_samples_answer_benign(bundled_engine):
    wrong = []
    for entry in bundled_engine.entries():
        if entry.kind != "benign":
            continue
        for k, sample in enumerate(entry.samples):
            d = bundled_engine.diagnose(report_from_text(sample))
            if d.verdict != "benign" or entry.id not in [c.id for c in d.results]:
                wrong.append((entry.id, k + 1, d.verdict, d.results[0].id if d.results else "-"))
    assert wrong == []


def test_no_healthy_log_is_answered_with_a_failure(bundled_engine):
    """The whole pipeline, not just the strong fingerprints: a run that ended well gets "no
    confident match" or "harmless", never a failure entry."""
    logs = healthy_logs()
    assert len(logs) >= 27
    answered = []
    for log in logs:
        d = bundled_engine.diagnose(report_from_text(log.text, name=log.name))
        if d.verdict not in ("abstain", "benign"):
            answered.append((log.name, d.verdict, d.results[0].id if d.results else "-"))
    assert answered == []
