"""The ``transformers`` judge on tiny causal LMs built here from a config (no download).

The tokenizer is a byte-level BPE trained on a few strings; the model a 2-layer Qwen2. With random
weights every verdict is ``unparseable`` (the generate/chat plumbing and the unparseable path);
a copy trained for a few seconds to answer two fixed conversations gives real parsed labels.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from stylebench.metrics.judges.base import JudgeRequest  # noqa: E402
from stylebench.metrics.judges.hf import TransformersJudge, plain_chat  # noqa: E402
from stylebench.metrics.judges.prompting import load_prompts, render  # noqa: E402

TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}"
)
ON = JudgeRequest("srd", "en", (("What is the capital of Canada?", "Ottawa is the capital."),))
OFF = JudgeRequest("srd", "en", (("What is the capital of Canada?", "I like green tea."),))
ANSWERS = {
    ON: '{"label": "relevant", "reason": "ok"}',
    OFF: '{"label": "irrelevant", "reason": "no"}',
}


def build_tiny(folder: Path, *, chat_template: bool = True) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = [load_prompts().srd.user, *ANSWERS.values(), "relevant irrelevant reason label"]
    tok.train_from_iterator(corpus, trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    if chat_template:
        fast.chat_template = TEMPLATE
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(
        vocab_size=len(fast),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
        tie_word_embeddings=True,
    )
    model = transformers.Qwen2ForCausalLM(cfg)
    fast.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: on a busy 2-core machine more threads make a tiny model 20x slower."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("tiny-judge"))


def test_random_weights_give_unparseable_verdicts_through_the_chat_template(tiny):
    j = TransformersJudge(str(tiny), max_new_tokens=6)
    assert j._lm is None  # nothing loads until a verdict is needed
    desc = j.describe()
    assert desc["backend"] == "transformers" and desc["local"]["config_sha256"]
    assert desc["prompts"]["srd"]["name"] == "srd_v1.txt"
    text = j.prompt_text(j.messages(ON))
    assert text.startswith("<s>system\n") and text.endswith("<s>assistant\n")
    assert "Ottawa is the capital." in text
    v1, v2 = j.judge(ON), j.judge(ON)
    assert v1.label == "unparseable" and v1.raw == v2.raw  # greedy: deterministic
    assert "capital of Canada" not in v1.raw  # only new tokens are decoded
    assert [v.label for v in j.judge_many([ON, OFF])] == ["unparseable"] * 2


def test_without_chat_template_uses_plain_text(tmp_path):
    folder = build_tiny(tmp_path / "plain", chat_template=False)
    j = TransformersJudge(str(folder), max_new_tokens=4)
    msgs = j.messages(ON)
    assert j.prompt_text(msgs) == plain_chat(msgs)
    assert plain_chat(msgs).endswith("\n\nAssistant:") and plain_chat(msgs).startswith("System: ")
    assert j.judge(ON).label == "unparseable"


def test_trained_tiny_judge_returns_parsed_labels(tiny, tmp_path):
    """Teach the tiny model two conversations (a few seconds), then judge them for real."""
    short = "[user]\n{{fence_begin}}\n{{data}}\n{{fence_end}}\n"  # a user prompt: short to train on
    (tmp_path / "srd.txt").write_text(short, encoding="utf-8")
    (tmp_path / "mrd.txt").write_text(short, encoding="utf-8")
    j = TransformersJudge(str(tiny), prompts=load_prompts(tmp_path), max_new_tokens=24)
    lm, tok = j.load()
    lm.train()
    opt = torch.optim.AdamW(lm.parameters(), lr=3e-3)
    batches = []
    for req, answer in ANSWERS.items():
        prompt = tok(j.prompt_text(j.messages(req)), add_special_tokens=False)["input_ids"]
        target = tok(answer + "</s>", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt + target])
        labels = torch.tensor([[-100] * len(prompt) + target])
        batches.append((ids, labels))
    for _ in range(60):
        for ids, labels in batches:
            opt.zero_grad()
            lm(input_ids=ids, labels=labels).loss.backward()
            opt.step()
    lm.eval()
    assert j.judge(ON).label == "relevant"
    v = j.judge(OFF)
    assert (v.label, v.reason) == ("irrelevant", "no")


def test_missing_model_is_a_clear_error(tmp_path):
    from stylebench.metrics.judges.base import JudgeError

    j = TransformersJudge(str(tmp_path / "no-such-model"))
    with pytest.raises(JudgeError, match="cannot load judge model"):
        j.judge(ON)


def test_render_matches_what_the_model_sees(tiny):
    j = TransformersJudge(str(tiny))
    msgs = render(j.prompts.srd, OFF)
    assert j.messages(OFF) == msgs
