"""`tokenkit serve` (issue 25): the local playground, driven in headless Chromium (Debian's
chromium + chromium-driver, through selenium). Text is typed into the page; the token counts,
ids and spans it shows are checked against `tokenkit encode` / `tokenkit chat` and the
reference libraries (tiktoken, HF tokenizers); the server's bounds and errors are checked over
HTTP; screenshots are kept in target/test-artifacts/."""
from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from data_corpus import ROOT, fixture, reference_tiktoken, tokenkit_bin

ARTIFACTS = ROOT / "target" / "test-artifacts"
QWEN3 = "registry/qwen3"  # tokenizer.json + tokenizer_config.json with Qwen3's chat template
BERT = "registry/bert_uncased/tokenizer.json"
TEXT = "Playground: naïve café, 東京タワー 🦀 x = 1234567; [MASK] done."


def cli(*args: str, stdin: str | None = None) -> str:
    p = subprocess.run([str(tokenkit_bin()), *args], capture_output=True, text=True, input=stdin)
    assert p.returncode == 0, f"tokenkit {' '.join(args)} failed ({p.returncode}): {p.stderr}"
    return p.stdout


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`tokenkit serve` on a free port, started in an empty directory it must leave empty."""
    cwd = tmp_path_factory.mktemp("serve-cwd")
    qwen_dir = fixture(QWEN3 + "/tokenizer_config.json").parent
    proc = subprocess.Popen([str(tokenkit_bin()), "serve", "-e", "cl100k_base", "-t", str(qwen_dir), "-t", str(fixture(BERT)),
                             "--port", "0"], cwd=cwd, stderr=subprocess.PIPE, text=True)
    url = None
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        if m:
            url = m.group(1)
            break
    if url is None:
        proc.kill()
        pytest.fail(f"tokenkit serve did not start: {proc.stderr.read() if proc.poll() is not None else 'no address printed'}")
    yield {"url": url, "qwen_dir": qwen_dir, "cwd": cwd}
    proc.terminate()
    proc.wait(timeout=30)
    assert list(cwd.iterdir()) == [], "tokenkit serve wrote files"


def post(url: str, body: bytes, content_type: str = "application/json") -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, headers={"content-type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"raw": raw.decode("utf-8", "replace")}


def wait_ready(driver, want_input: dict, timeout: float = 60) -> None:
    """Waits until the page shows the answer to exactly `want_input`."""
    deadline = time.time() + timeout
    state = None
    while time.time() < deadline:
        state = driver.execute_script(
            "const r = document.getElementById('results'); return [r.dataset.state, r.dataset.input || '', "
            "document.getElementById('status').textContent];")
        if state[0] == "ready" and state[1] and json.loads(state[1]) == want_input:
            return
        time.sleep(0.1)
    raise AssertionError(f"the page did not show {want_input}: state {state}")


def cards(driver) -> list[dict]:
    """Each result card: its name, token count, error, rendered chat, ids, and its token spans."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('#results .result')).map(c => ({
            name: c.querySelector('h2').textContent,
            count: c.querySelector('.token-count') ? Number(c.querySelector('.token-count').textContent) : null,
            error: c.querySelector('.error') ? c.querySelector('.error').textContent : null,
            rendered: c.querySelector('.rendered') ? c.querySelector('.rendered').textContent : null,
            ids: c.querySelector('.ids') ? JSON.parse(c.querySelector('.ids').textContent) : null,
            spans: Array.from(c.querySelectorAll('.tokenized-text > span')).map(
                s => [s.dataset.ids ? s.dataset.ids.split(' ').map(Number) : [], s.className, s.textContent]),
        }));
    """)


def dedup(xs: list[int]) -> list[int]:
    """Ids in page order, a token listed by two runs (a character cut between bytes) once."""
    return [x for k, x in enumerate(xs) if k == 0 or x != xs[k - 1]]


def test_api_lists_tokenizers_and_is_bounded(server):
    with urllib.request.urlopen(server["url"] + "api/tokenizers", timeout=30) as r:
        listed = json.loads(r.read())
    assert [(t["name"], t["path"], t["kind"], t["chat_template"]) for t in listed] == [
        ("qwen3", str(server["qwen_dir"]), "tokenizer", True), ("bert_uncased/tokenizer.json", str(fixture(BERT)), "tokenizer", False),
        ("cl100k_base", "cl100k_base", "tiktoken", False)]
    assert listed[2]["vocab_size"] == reference_tiktoken("cl100k_base").n_vocab
    encode = server["url"] + "api/encode"
    # A body over 1 MiB is refused unread; one just under is encoded.
    status, body = post(encode, json.dumps({"text": "a" * (1 << 20)}).encode())
    assert status == 413, (status, body)
    status, body = post(encode, json.dumps({"text": "ab " * 300_000, "tokenizers": [2]}).encode())
    assert status == 200 and body[0]["tokens"] == len(reference_tiktoken("cl100k_base").encode_ordinary("ab " * 300_000))
    for bad, why in [(b"{not json", "as JSON"), (json.dumps({"text": 5}).encode(), "text"),
                     (json.dumps({"text": "x", "tokenizers": [9]}).encode(), "no tokenizer 9")]:
        status, body = post(encode, bad)
        assert 400 <= status < 500 and why in json.dumps(body), (bad, status, body)
    status, body = post(server["url"] + "api/chat", json.dumps({"messages": "hi"}).encode())
    assert status == 400 and "must be an array" in body["error"], body
    # The page is self-contained: nothing is fetched from another host.
    with urllib.request.urlopen(server["url"], timeout=30) as r:
        page = r.read().decode()
    assert "tokenized-text" in page and not re.search(r"https?://", page), "the page must work offline"
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)


def test_playground_text_view_in_chromium(server, browser):
    from selenium.webdriver.common.by import By

    from tokenizers import Tokenizer as HfTokenizer

    browser.set_window_size(1500, 950)
    browser.get(server["url"])
    box = browser.find_element(By.ID, "text")
    wait_ready(browser, {"text": box.get_attribute("value"), "tokenizers": [0, 1, 2], "add_special_tokens": True})
    box.clear()
    box.send_keys(TEXT)
    wait_ready(browser, {"text": TEXT, "tokenizers": [0, 1, 2], "add_special_tokens": True})
    shown = cards(browser)
    qwen_json = server["qwen_dir"] / "tokenizer.json"
    # The page shows the whole text unpadded: the CLI's ids under its attention mask (this BERT
    # tokenizer.json pads to 128).
    unpadded = lambda e: [i for i, m in zip(e["ids"], e["attention_mask"]) if m]  # noqa: E731
    want = {
        "qwen3": unpadded(json.loads(cli("encode", "--full", "-t", str(server["qwen_dir"]), TEXT))),
        "bert_uncased/tokenizer.json": unpadded(json.loads(cli("encode", "--full", "-t", str(fixture(BERT)), TEXT))),
        "cl100k_base": json.loads(cli("encode", "-e", "cl100k_base", TEXT))["ids"],
    }
    # The CLI's ids are the reference libraries' ids.
    assert want["cl100k_base"] == reference_tiktoken("cl100k_base").encode_ordinary(TEXT)
    assert want["qwen3"] == HfTokenizer.from_file(str(qwen_json)).encode(TEXT).ids
    bert = HfTokenizer.from_file(str(fixture(BERT)))
    bert.no_padding()
    bert.no_truncation()
    assert want["bert_uncased/tokenizer.json"] == bert.encode(TEXT).ids
    assert [c["name"] for c in shown] == list(want)
    for c in shown:
        ids = want[c["name"]]
        assert c["error"] is None and c["count"] == len(ids) and c["ids"] == ids, c["name"]
        assert dedup([i for s in c["spans"] for i in s[0]]) == dedup(ids), c["name"]
        assert "".join(t for _, _, t in c["spans"]) == TEXT, c["name"]
    # BERT's [CLS] and [SEP] are drawn as special-token chips, with their ids.
    chips = [s for s in shown[1]["spans"] if s[1] == "special-token"]
    assert [s[0] for s in chips] == [[bert.token_to_id("[CLS]")], [bert.token_to_id("[SEP]")]], chips
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "playground-text.png"))
    # Without the post-processor's tokens: BERT loses [CLS] and [SEP]; the others do not change.
    browser.find_element(By.ID, "special").click()
    wait_ready(browser, {"text": TEXT, "tokenizers": [0, 1, 2], "add_special_tokens": False})
    counts = {c["name"]: c["count"] for c in cards(browser)}
    assert counts == {k: len(v) - (2 if k.startswith("bert") else 0) for k, v in want.items()}, counts
    # Only the picked tokenizers are shown.
    browser.find_elements(By.CSS_SELECTOR, "#picker input")[0].click()
    wait_ready(browser, {"text": TEXT, "tokenizers": [1, 2], "add_special_tokens": False})
    assert [c["name"] for c in cards(browser)] == ["bert_uncased/tokenizer.json", "cl100k_base"]
    print(f"playground text view: {len(want)} tokenizers, counts {[len(v) for v in want.values()]} equal to the CLI's; "
          "screenshot target/test-artifacts/playground-text.png")


def test_playground_chat_view_in_chromium(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    browser.set_window_size(1500, 950)
    browser.get(server["url"])
    wait_ready(browser, {"text": browser.find_element(By.ID, "text").get_attribute("value"), "tokenizers": [0, 1, 2],
                         "add_special_tokens": True})
    browser.find_element(By.ID, "view-chat").click()
    messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "How do tokenizers cut 東京タワー?"}]
    wait_ready(browser, {"messages": messages, "tokenizers": [0, 1, 2], "add_generation_prompt": True})
    # Edit the user's message and add one.
    rows = browser.find_elements(By.CSS_SELECTOR, "#messages .message textarea")
    rows[1].send_keys(" And 12345?")
    browser.find_element(By.ID, "add-message").click()
    browser.find_elements(By.CSS_SELECTOR, "#messages .message textarea")[2].send_keys("Pieces!")
    Select(browser.find_elements(By.CSS_SELECTOR, "#messages .message select")[2]).select_by_value("assistant")
    messages[1]["content"] += " And 12345?"
    messages.append({"role": "assistant", "content": "Pieces!"})
    browser.find_element(By.ID, "generation-prompt").click()
    wait_ready(browser, {"messages": messages, "tokenizers": [0, 1, 2], "add_generation_prompt": False})
    shown = cards(browser)
    conversation = tmp_path / "chat.json"
    conversation.write_text(json.dumps(messages))
    qwen = str(server["qwen_dir"])
    want_text = cli("chat", "-t", qwen, "--messages", str(conversation))
    want_ids = json.loads(cli("chat", "-t", qwen, "--messages", str(conversation), "--ids"))
    assert shown[0]["rendered"] == want_text and "<|im_start|>assistant\n" in want_text and "Pieces!<|im_end|>" in want_text
    assert shown[0]["ids"] == want_ids and shown[0]["count"] == len(want_ids)
    assert dedup([i for s in shown[0]["spans"] for i in s[0]]) == dedup(want_ids)
    # Qwen3's special tokens in the rendered text are marked, its other added tokens (<think>) not.
    marked = [t for _, cls, t in shown[0]["spans"] if "special-text" in cls.split()]
    assert sorted(set(marked)) == ["<|im_end|>", "<|im_start|>"], marked
    assert len(marked) == want_text.count("<|im_start|>") + want_text.count("<|im_end|>")
    # Tokenizers without a chat template say so.
    assert all(c["error"] and "no chat template" in c["error"] for c in shown[1:]), shown[1:]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "playground-chat.png"))
    print(f"playground chat view: Qwen3's template, {len(want_ids)} ids equal to tokenkit chat --ids; "
          "screenshot target/test-artifacts/playground-chat.png")


def test_serve_with_a_chat_template_for_tiktoken(tmp_path):
    """--chat-template gives a template to tokenizers without one; tiktoken encodes the special
    tokens of the rendered chat as special tokens."""
    template = tmp_path / "chatml.jinja"
    template.write_text("{% for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{% endfor %}"
                        "{% if add_generation_prompt %}<|start|>assistant{% endif %}")
    proc = subprocess.Popen([str(tokenkit_bin()), "serve", "-e", "o200k_harmony", "--chat-template", str(template), "--port", "0"],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", line).group(1)
        status, body = post(url + "api/chat", json.dumps({"messages": [{"role": "user", "content": "hi"}],
                                                          "add_generation_prompt": True}).encode())
        assert status == 200, body
        rendered = "<|start|>user<|message|>hi<|end|><|start|>assistant"
        assert body[0]["rendered"] == rendered
        import tiktoken
        import tiktoken.load
        import tiktoken_ext.openai_public as op

        ranks = fixture("tiktoken/o200k_base.tiktoken")  # o200k_harmony is o200k_base's ranks with more special tokens
        op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(ranks))
        enc = tiktoken.Encoding(**op.o200k_harmony())
        assert body[0]["ids"] == enc.encode(rendered, allowed_special="all")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    bad = subprocess.run([str(tokenkit_bin()), "serve", "-e", "cl100k_base", "--chat-template", str(tmp_path / "missing.jinja")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "missing.jinja" in bad.stderr
    none = subprocess.run([str(tokenkit_bin()), "serve", "--port", "0"], capture_output=True, text=True)
    assert none.returncode != 0 and "at least one tokenizer" in none.stderr
