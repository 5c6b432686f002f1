#!/usr/bin/env python3
"""Generate crates/core/tests/fixtures/python_simhash.jsonl from PyPI `simhash` 2.1.2.

Sanity values (Python 3.11.7, simhash 2.1.2, numpy 1.26.4):

    Simhash("How are you? I am fine. Thanks.").value == 0x2f73898a203ee80b
    Simhash("").value                              == 0xe9800998ecf8427e

What `Simhash(text).value` does with the defaults (f=64,
reg=r'[\\w\\u4e00-\\u9fcc]+', hashfunc=md5), read from simhash/__init__.py:

1. `content = text.lower()` -- Python's full lower-case mapping, including the
   Final_Sigma rule for U+03A3 and 'İ' (U+0130) -> 'i' + U+0307 (2 code points).
2. `content = ''.join(re.findall(r'[\\w\\u4e00-\\u9fcc]+', content))` -- keep only
   "word" characters (str.isalnum() or '_'; in Python 3.11 exactly general
   categories L*, N* and '_'; U+4E00..U+9FCC are Lo anyway) and concatenate
   them with NO separator, so 4-grams run across former word boundaries
   ("ab cd" and "abcd" hash the same).
3. Features: sliding windows of 4 code points,
   `[content[i:i+4] for i in range(max(len(content) - 3, 1))]`.  When the
   content is shorter than 4 code points there is exactly one feature: the
   whole content, even when it is empty (so every text without a word
   character hashes like "": 0xe9800998ecf8427e = last 8 bytes of md5(b"")).
4. Weights: the number of occurrences of each distinct 4-gram (groupby over
   the sorted list); total = number of windows = max(len(content) - 3, 1).
5. Per feature: h = int.from_bytes(md5(gram.encode('utf-8')).digest()[-8:],
   'big'), i.e. the md5 digest read as a 128-bit big-endian integer truncated
   to its low 64 bits.
6. Bit k of the value (k = 0 is the least significant) is set iff
   sum(weight of features whose h has bit k set) > total / 2 (strictly
   greater: a tie gives 0).

The script checks every value against an independent pure-Python
re-implementation of the steps above (`reference_simhash`).

Caveats found while reading the package:
* Counts > 50 go through `np.unpackbits(...) * count` on a uint8 array.  With
  numpy < 2 value-based casting widens the dtype; with numpy >= 2 it raises
  OverflowError for any 4-gram that occurs more than 255 times.  Hence the
  pin numpy<2 (tools/peers/requirements.txt).
* Values depend on the Unicode database of the Python that runs the package
  (lower() and \\w): Python 3.11 ships Unicode 14.0.0.  The script refuses to
  run with another Unicode version unless --allow-unicode-mismatch is given.

Output: one JSON object per line, {"text", "value", "kind"}, "value" being the
64-bit value as 16 lower-case hex digits.  Written with ensure_ascii=False,
except that U+0085, U+2028 and U+2029 are written as \\u escapes so that a
reader splitting on any Unicode line break (str.splitlines, some editors)
still sees one record per line.  Texts are generated deterministically
(fixed seeds, no network, no input files); running the script twice yields
byte-identical output.

Usage:
    tools/peers/setup-venv.sh
    /work/venv-peers/bin/python tools/make_python_simhash_fixture.py [--out PATH] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import unicodedata
from collections import Counter
from importlib.metadata import version
from pathlib import Path

SEED = 20240611
REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "crates" / "core" / "tests" / "fixtures" / "python_simhash.jsonl"
EXPECTED_UNICODE = "14.0.0"
MAX_FIXTURE_BYTES = 3_200_000


# --------------------------------------------------------------------------
# Reference implementation (no numpy), used to cross-check the package.
# --------------------------------------------------------------------------

_WORD = re.compile(r"[\w\u4e00-\u9fcc]+")


def reference_simhash(text: str) -> int:
    content = "".join(_WORD.findall(text.lower()))
    n = max(len(content) - 3, 1)
    grams = Counter(content[i : i + 4] for i in range(n))
    sums = [0] * 64
    for gram, weight in grams.items():
        h = int.from_bytes(hashlib.md5(gram.encode("utf-8")).digest()[-8:], "big")
        for k in range(64):
            if (h >> k) & 1:
                sums[k] += weight
    value = 0
    for k in range(64):
        if 2 * sums[k] > n:
            value |= 1 << k
    return value


# --------------------------------------------------------------------------
# Vocabularies.
# --------------------------------------------------------------------------

EN_NOUNS = """time year people way day man thing woman life child world school state
family student group country problem hand part place case week company system program
question work government number night point home water room mother area money story fact
month lot right study book eye job word business issue side kind head house service friend
father power hour game line end member law car city community name president team minute
idea kid body information back parent face others level office door health person art war
history party result change morning reason research girl guy moment air teacher force
education river mountain garden bridge window letter engine signal market harbor library
document server database network message fingerprint duplicate algorithm""".split()
EN_VERBS = """runs builds finds keeps opens reads writes moves brings holds turns starts
shows hears plays learns changes leads understands watches follows stops creates speaks
allows adds spends grows offers remembers loves considers appears buys waits serves
dies sends expects stays falls cuts reaches kills remains suggests raises passes sells
requires reports decides pulls compares indexes hashes detects""".split()
EN_ADJS = """good new first last long great little own other old right big high different
small large next early young important few public bad same able quiet bright careful
simple strange green ancient modern heavy gentle sudden narrow broad""".split()
EN_ADVS = """quickly slowly quietly carefully rarely often never always suddenly gently
almost nearly finally probably""".split()
EN_FIXED = [
    "How are you? I am fine. Thanks.",
    "How are you? I am fine. Thanks!",
    "how are you i am fine thanks",
    "HOW ARE YOU? I AM FINE. THANKS.",
    "The quick brown fox jumps over the lazy dog.",
    "The quick brown fox jumped over the lazy dog.",
    "Pack my box with five dozen liquor jugs.",
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness.",
    "Call me Ishmael. Some years ago - never mind how long precisely - having little or "
    "no money in my purse, and nothing particular to interest me on shore, I thought I "
    "would sail about a little and see the watery part of the world.",
    "A journey of a thousand miles begins with a single step.",
    "Don't count your chickens before they're hatched; it's wiser to wait.",
    "She said, \"Well... I'm not sure -- maybe tomorrow?\"",
    "e.g., i.e., etc., vs. Mr. Smith & Mrs. O'Neil (née Jones).",
    "To be, or not to be: that is the question.",
    "tobeornottobethatisthequestion",
]


def english_sentence(rng: random.Random) -> str:
    pattern = rng.randrange(5)
    the = lambda: rng.choice(["the", "a", "every", "this", "that", "one"])  # noqa: E731
    if pattern == 0:
        words = [the(), rng.choice(EN_ADJS), rng.choice(EN_NOUNS), rng.choice(EN_VERBS),
                 the(), rng.choice(EN_NOUNS)]
    elif pattern == 1:
        words = [the(), rng.choice(EN_NOUNS), rng.choice(EN_ADVS), rng.choice(EN_VERBS),
                 the(), rng.choice(EN_ADJS), rng.choice(EN_NOUNS), "near", the(),
                 rng.choice(EN_NOUNS)]
    elif pattern == 2:
        words = ["when", the(), rng.choice(EN_NOUNS), rng.choice(EN_VERBS), the(),
                 rng.choice(EN_NOUNS) + ",", the(), rng.choice(EN_NOUNS),
                 rng.choice(EN_VERBS), rng.choice(EN_ADVS)]
    elif pattern == 3:
        words = [the(), rng.choice(EN_NOUNS), "of", the(), rng.choice(EN_ADJS),
                 rng.choice(EN_NOUNS), rng.choice(EN_VERBS), "it", rng.choice(EN_ADVS)]
    else:
        words = ["why", "does", the(), rng.choice(EN_NOUNS), "keep", "the",
                 rng.choice(EN_ADJS), rng.choice(EN_NOUNS)]
    s = " ".join(words)
    end = "?" if pattern == 4 else rng.choice([".", ".", ".", "!", "..."])
    return s[0].upper() + s[1:] + end


def english_paragraph(rng: random.Random, lo: int = 3, hi: int = 9) -> str:
    return " ".join(english_sentence(rng) for _ in range(rng.randint(lo, hi)))


def near_variant(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    op = rng.randrange(4)
    i = rng.randrange(len(words))
    if op == 0:
        words[i] = rng.choice(EN_NOUNS)
    elif op == 1:
        del words[i]
    elif op == 2:
        words.insert(i, rng.choice(EN_ADJS))
    else:
        words[i] = words[i].upper()
    return " ".join(words)


ZH_SIMPLIFIED = [
    "我们今天去公园散步，天气非常好。",
    "这个算法可以快速找到重复的文档。",
    "中华人民共和国成立于一九四九年。",
    "他说：“明天我们一起去北京吧！”",
    "机器学习是人工智能的一个重要分支。",
    "请把这份文件发送给所有的同事。",
    "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。",
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
    "近似重复检测在搜索引擎中非常重要。",
    "我爱北京天安门，天安门上太阳升。",
    "今天的会议推迟到下午三点。",
    "数据清洗是训练语言模型的第一步。",
    "这家餐厅的饺子特别好吃，价格也便宜。",
    "长江是中国最长的河流。",
    "你好，世界！",
    "学而时习之，不亦说乎？",
    "一二三四五六七八九十百千万亿",
    "〇一二三",
]
ZH_TRADITIONAL = [
    "我們今天去公園散步，天氣非常好。",
    "這個演算法可以快速找到重複的文件。",
    "臺灣的夜市非常熱鬧。",
    "請把這份檔案傳送給所有的同事。",
    "機器學習是人工智慧的一個重要分支。",
    "春眠不覺曉，處處聞啼鳥。夜來風雨聲，花落知多少。",
    "近似重複檢測在搜尋引擎中非常重要。",
    "香港的維多利亞港景色優美。",
    "龍鳳呈祥，萬事如意。",
    "學而時習之，不亦說乎？",
    "電腦軟體與資料庫的相容性問題。",
    "「你好嗎？」他問。『我很好。』她答。",
]
# Outside U+4E00..U+9FCC but still \w (Lo): Ext A, Ext B, U+9FCD..U+9FFF,
# compatibility ideographs.  Kangxi/CJK radicals (So) are NOT \w.
ZH_EXTRA = [
    "\u3400\u3401\u4db5是扩展A区的字",
    "\U00020000\U00020001\U0002a6d6是扩展B区",
    "\u9fcd\u9fce\u9fef\u9ffc在原来的范围之外",
    "\uf900\uf901\uf902兼容汉字",
    "\u2f00\u2f01\u2f02康熙部首与一丨丶",
    "\u2e80\u2e81\u2e82部首补充",
    "一⼀", "人⼈", "\u9fcc\u9fcd\u9fcb",
]


JA_TEXTS = [
    "こんにちは、世界！",
    "今日はいい天気ですね。",
    "吾輩は猫である。名前はまだ無い。",
    "カタカナとひらがなと漢字が混ざった文章です。",
    "コンピューターのメモリーが足りません。",
    "ｶﾀｶﾅﾃﾞｽ ﾊﾝｶｸ ｶﾞｷﾞｸﾞ",
    "人々は時々、色々な所へ行く。",
    "ヽヾゝゞ〃々〆〇",
    "東京都渋谷区神南１－２－３",
    "ｱｲｳｴｵ アイウエオ あいうえお",
    "ガ\u30ac と カ\u3099 と か\u3099",
    "日本語の文章には空白がありません。",
    "〜ですね〜！　そうですよね？",
    "㈱会社　㍿　㌔㍍",
    "ﾟﾞ",
]
KO_TEXTS = [
    "안녕하세요, 세계!",
    "오늘 날씨가 정말 좋네요.",
    "대한민국의 수도는 서울입니다.",
    "중복 문서를 빠르게 찾는 알고리즘",
    "韓國語와 漢字를 섞어 쓴 文章",
    "\u1112\u1161\u11ab\u1100\u1173\u11af",  # 한글 as conjoining jamo (NFD)
    "\u3131\u314f\u3134\u3137",  # compatibility jamo ㄱㅏㄴㄷ
    "ㅋㅋㅋㅋㅋ ㅎㅎㅎ",
    "서울특별시 강남구 테헤란로 123",
    "훈민정음은 세종대왕이 만들었다.",
]

CYRILLIC = [
    "Привет, мир!",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "ПРИВЕТ МИР",
    "Москва — столица России.",
    "Ёлка и ёжик",
    "ЁЛКА И ЁЖИК",
    "Україна: їжак, єнот, ґанок.",
    "Београд је главни град Србије. Љубав, њива, џеп.",
    "за\u0301мок и замо\u0301к",
    "Ѣ ѣ Ѳ ѳ Ѵ ѵ старая орфографія",
    "Қазақстан Республикасы",
    "ӘӨҮҰ әөүұ",
]
GREEK = [
    "ΟΔΟΣ",
    "ΣΑΣ",
    "ΟΔΟΣ ΣΑΣ",
    "ΟΔΥΣΣΕΥΣ",
    "Ο ΣΟΦΟΣ ΑΝΘΡΩΠΟΣ.",
    "Σ",
    "ΑΣ.",
    "ΑΣ.Σ",
    "ΑΣ\u0301",
    "Α\u0301Σ",
    "ΑΣ:Β",
    "AΣ",
    "ʰΣ",
    "Α'Σ",
    "ΑΣ1",
    "ΑΣ_",
    "Καλημέρα κόσμε",
    "Τάχιστη αλώπηξ βαφής ψημένη γη, δρασκελίζει υπέρ νωθρού κυνός.",
    "Ἐν ἀρχῇ ἦν ὁ λόγος",
    "ᾼ ᾳ ῌ ῃ ᾈ",
    "ΐ ΰ ϐ ϑ ϕ ϖ ϰ ϱ ϵ",
    "σοφός σοφὸς ΣΟΦΟΣ",
]

ARABIC = [
    "مرحبا بالعالم",
    "مَرْحَبًا بِالْعَالَمِ",
    "العربيــــــة",
    "٠١٢٣٤٥٦٧٨٩",
    "۰۱۲۳۴۵۶۷۸۹ فارسی",
    "السلام عليكم ورحمة الله وبركاته.",
    "اردو زبان \u200fپاکستان\u200f",
    "سعر الكتاب 25 ريالاً فقط!",
]
HEBREW = [
    "שלום עולם",
    "שָׁלוֹם עוֹלָם",
    "בְּרֵאשִׁית בָּרָא אֱלֹהִים",
    "עברית \u200fומספרים 123\u200e",
    "יידיש: װאָס מאַכסטו?",
    "ﬠﬡﬢ ﭏ",
]
INDIC = [
    "नमस्ते दुनिया",
    "हिन्दी भाषा",
    "दुःख",
    "अंतःकरण",
    "क़लम ज़रूर फ़िल्म",
    "क्\u200dष क्\u200cष",
    "०१२३४५६७८९ रुपये",
    "मराठी भाषा महाराष्ट्रात बोलली जाते.",
    "বাংলা ভাষা",
    "தமிழ் மொழி",
    "ગુજરાતી ભાષા",
    "ਪੰਜਾਬੀ",
    "സ്വാഗതം",
    "ॐ नमः शिवाय",
    "चाँद",
]

EMOJI = [
    "\U0001F600",
    "\U0001F600\U0001F601\U0001F602",
    "I love it \u2764\ufe0f\U0001F525",
    "family: \U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466",
    "\U0001F469\U0001F3FD\u200d\U0001F4BB coding",
    "\U0001F44D\U0001F3FB\U0001F44D\U0001F3FC\U0001F44D\U0001F3FD\U0001F44D\U0001F3FE\U0001F44D\U0001F3FF",
    "flags \U0001F1EB\U0001F1F7 \U0001F1E9\U0001F1EA \U0001F1EF\U0001F1F5 \U0001F1FA\U0001F1F8",
    "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F Scotland",
    "keycaps 1\ufe0f\u20e3 2\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3",
    "\U0001F3F3\ufe0f\u200d\U0001F308 pride",
    "\u263a \u263a\ufe0f \u263a\ufe0e",
    "ok\U0001F44C",
    "\U0001F60D\U0001F60D\U0001F60D\U0001F60D\U0001F60D",
    "中文\U0001F604表情",
    "\U0001F9D1\u200d\U0001F91D\u200d\U0001F9D1",
    "©️ ®️ ™️",
    "\U0001F1E6",
    "\U0001FAE0 \U0001FAE8",  # 14.0 melting face, 15.0 shaking face
]

ZALGO_MARKS = [chr(c) for c in range(0x0300, 0x0370)] + [chr(c) for c in range(0x0483, 0x0488)] + [
    "\u20d0", "\u20d1", "\u20e3", "\u20dd", "\u034f", "\u0489"]

FULLWIDTH = [
    "ＡＢＣ１２３",
    "ａｂｃ１２３",
    "Ｈｅｌｌｏ，　Ｗｏｒｌｄ！",
    "ＡＢＣ abc ABC ａｂｃ",
    "１２３４５６７８９０",
    "￥１，０００円",
    "ＦＵＬＬ＿ＷＩＤＴＨ＿ＵＮＤＥＲＳＣＯＲＥ",
    "full_width＿mixed",
    "（括号）［方括号］｛花括号｝",
    "ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｏｍ",
    "Ｐｙｔｈｏｎ３．１１",
    "＃ｈａｓｈｔａｇ　＠ｕｓｅｒ",
    "ＡＢＣＤ",
    "ＡＢＣＤＥ",
    "ｱﾞ Ａ ａ",
    "０ＸＦＦ",
    "ＩＰｈｏｎｅ１５",
    "\uff10\uff41\uff21\uff5a\uff3a",
    "ＳＨＯＵＴＩＮＧ　ＩＮ　ＦＵＬＬ　ＷＩＤＴＨ",
    "ﾊﾝｶｸ ＨＡＮＫＡＫＵ hankaku",
]

CASE_MAPPING = [
    "İ", "İstanbul", "İSTANBUL", "istanbul", "ıi Iİ", "Iİ", "iİi",
    "ß", "ẞ", "STRASSE", "Straße", "GROẞE STRAẞE", "grosse",
    "ǅ", "ǄǅǆǇǈǉǊǋǌ", "ǅemal", "ǲ",
    "ﬁ", "ﬁnance ﬂow ﬀ ﬃ ﬄ ﬅ ﬆ", "finance flow",
    "Ⅻ", "Ⅰ Ⅱ Ⅲ Ⅳ Ⅴ Ⅻ", "ⅰⅱⅲⅳ", "ↀↁↂ",
    "①②③④⑤", "⑴⑵⒈⒉", "x²+y²=z²", "H₂O CO₂", "10⁻³ ⁰¹²³⁴⁵⁶⁷⁸⁹",
    "½ ¼ ¾ ⅓ ⅔ ⅕ ⅞", "1½ cups", "___", "foo__bar", "__init__", "_", "a_b_c_d",
    "\u212a\u212b\u2126",  # Kelvin, Angstrom, Ohm signs
    "Ⓐ Ⓑ Ⓒ ⓐⓑⓒ",
    "𝐀𝐁𝐂 𝒶𝒷𝒸 𝟏𝟐𝟑",
    "Ꭰ Ꭱ Ꭲ ꭰ ꭱ",  # Cherokee
    "ᲐᲑᲒ აბგ",  # Georgian Mtavruli / Mkhedruli
    "𐐀𐐁 𐐨𐐩",  # Deseret
    "ª º ʰ ʲ ᵃ ⁱ ⁿ",
    "ŉ ǰ ΐ ΰ և",
    "Ꟁꟁ",  # Unicode 14.0 additions (U+A7C0/U+A7C1)
    "Ǳ ǲ ǳ",
    "ÅNGSTRÖM Ångström",
    "ĲSSELMEER ĳsselmeer",
    "ｷﾞｮｳ",
    "Ω ω Ω",
]

WHITESPACE = [
    " ", "  ", "\t", "\n", "\r\n", "\r", " \t\n", "\u00a0", "\u00a0\u00a0\u00a0",
    "\u3000", "\u3000\u3000", "\u2002\u2003\u2009", "\u200b", "\u2028", "\u2029",
    "\u0085", "\ufeff", "\u180e", "\u205f\u2060", "\u1680", "\x0b\x0c",
    " \u00a0 \u3000 \t ", "\n\n\n\n\n\n", " " * 100, "\t" * 33, "\u202f\u2007",
    "\u00a0\n\u3000\r\n\t",
]

PUNCT_ONLY = [
    "!", "?!", "...", "—", "!!!???", "-- -- --", "(){}[]<>", "@#$%^&*",
    "¡¿«»‹›“”‘’", "。，、；：？！", "・・・", "♥♦♣♠", "→←↑↓", "∑∏∫√∞≈≠",
    "€£¥₹₿", "|/\\", "~`'\"", "‿⁀＿", "\u2212\u00b1\u00d7\u00f7", "〜〰",
    "\u02c6\u02dc\u00b4",  # modifier symbols (Sk) are not \w
]

CONTROL = [
    "\x00", "\x00\x00\x00\x00\x00", "a\x00b", "ab\x00cd", "hello\x00world",
    "\x01\x02\x03\x04", "\x07bell", "\x1b[31mred\x1b[0m text",
    "\x1b[1;32mOK\x1b[0m", "line\x0bvertical\x0cfeed", "\x7f", "del\x7fete",
    "\x80\x81\x9f", "C1\x85NEL", "text\x1cfile\x1dgroup\x1erecord\x1funit",
    "back\x08space", "\x0e\x0f shift", "tab\tseparated\tvalues",
    "\x00中\x00文\x00", "null\x00 \x00terminated\x00",
    "\ufffd replacement \ufffd", "\ufffe\uffff nonchars", "\U0010fffe\U0010ffff",
    "\ue000\uf8ff private use", "\U000f0000 plane 15",
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e bidi controls",
    "soft\u00adhyphen", "zero\u200bwidth\u200cnon\u200djoiner",
]


def gen_english(rng: random.Random) -> list[str]:
    out = list(EN_FIXED)
    for _ in range(14):
        out.append(english_sentence(rng))
    for _ in range(10):
        out.append(english_paragraph(rng))
    for _ in range(6):
        base = english_paragraph(rng, 2, 5)
        out.append(base)
        out.append(near_variant(rng, base))
    return out


def gen_web(rng: random.Random) -> list[str]:
    out = [
        "https://www.example.com/path/to/page.html?query=simhash&lang=en#section-2",
        "Visit http://example.org or https://example.net/a_b-c/?x=1&y=2 for details.",
        "ftp://files.example.com/pub/README.txt",
        "Contact: john.doe+spam@example.co.uk, jane_doe@mail.example.org",
        "<html><head><title>Test &amp; Page</title></head><body><p>Hello&nbsp;world</p></body></html>",
        "<div class=\"content\" id='main'><a href=\"/x\">link</a><br/><img src=\"a.png\" alt=\"\"></div>",
        "&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt; &#169; &#x2603;",
        "# Heading 1\n\n## Heading 2\n\n* item one\n* item **two**\n* item _three_\n",
        "[link text](https://example.com \"title\") and ![image](img.png) and `inline code`",
        "| col1 | col2 |\n|------|------|\n| 1.5  | 2,000 |\n| a    | b    |",
        "```python\ndef f(x):\n    return x ** 2\n```",
        "Pi is 3.14159, e is 2.71828, and 1,000,000 is a million.",
        "Price: $1,234.56 (was $2,000.00) - save 38%!",
        "Prix : 1 234,56 € ; 1.234,56 EUR; 1'234.56 CHF",
        "Dates: 2024-01-31, 31/01/2024, 01.31.2024, 12:30:45.123Z",
        "Phone: +1 (555) 123-4567 ext. 89",
        "IP 192.168.0.1, IPv6 2001:db8::ff00:42:8329, MAC 00:1A:2B:3C:4D:5E",
        "#simhash #NearDuplicate #rustlang @neardup_bot",
        "RT @user: check this out!!! #wow #amazing http://t.co/AbCdEf123",
        "fn main() { let v: Vec<u64> = (0..10).map(|x| x * x).collect(); println!(\"{:?}\", v); }",
        "SELECT id, name FROM users WHERE email LIKE '%@example.com' ORDER BY id DESC LIMIT 10;",
        "{\"key\": \"value\", \"n\": 42, \"list\": [1, 2.5, -3e10], \"ok\": true, \"none\": null}",
        "const snake_case_var = some_function(arg_one, arg_two); // TODO: fix_me",
        "body { margin: 0; padding: 10px 20px; color: #ff00ff; font-size: 1.5em; }",
        "$ git commit -m \"fix: handle CRLF\" && cargo test --release -- --nocapture",
        "C:\\Users\\Admin\\Documents\\file_v2.final.docx",
        "/usr/local/lib/python3.11/site-packages/simhash/__init__.py",
        "v1.2.3-beta.4+build.567",
        "0xDEADBEEF 0b1010 0o777 1e-9 -42 +7 3.0e+8",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit. https://lorem.example",
        "UTF-8: caf\u00e9, na\u00efve, r\u00e9sum\u00e9 -- see https://en.example.org/wiki/Caf%C3%A9",
        "base64: SGVsbG8sIFdvcmxkIQ== sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]
    domains = ["example.com", "test.org", "neardup.dev", "mail.example.net"]
    for _ in range(8):
        user = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_.0123456789") for _ in range(rng.randint(3, 12)))
        path = "/".join(rng.choice(EN_NOUNS) for _ in range(rng.randint(1, 4)))
        n = rng.randint(0, 10**7)
        out.append(
            f"<p>{english_sentence(rng)} Mail {user}@{rng.choice(domains)} or see "
            f"https://{rng.choice(domains)}/{path}?id={n}&amp;page={rng.randint(1, 99)}</p> "
            f"#{rng.choice(EN_NOUNS)} {n:,} items, {rng.random() * 100:.2f}%"
        )
    return out


def gen_chinese(rng: random.Random) -> list[str]:
    out = list(ZH_SIMPLIFIED) + list(ZH_TRADITIONAL) + list(ZH_EXTRA)
    pool = "".join(ZH_SIMPLIFIED[:8])
    pool = [c for c in pool if "\u4e00" <= c <= "\u9fcc"]
    for _ in range(6):
        n = rng.randint(20, 120)
        s = "".join(rng.choice(pool) for _ in range(n))
        # sprinkle Chinese punctuation
        s = "".join(ch + (rng.choice("，。、；！？") if rng.random() < 0.08 else "") for ch in s)
        out.append(s)
    return out


def gen_mixed(rng: random.Random) -> list[str]:
    out = [
        "我今天用Python写了一个simhash程序。",
        "iPhone 15 Pro的价格是7999元。",
        "请访问https://example.com/中文页面获取更多信息",
        "Rust语言的所有权(ownership)机制非常有趣",
        "NLP自然语言处理 and 机器学习 machine learning",
        "这是一个test，that是一个测试。",
        "版本v2.1.2修复了bug #123",
        "我在Google工作，他在Microsoft。",
        "COVID-19疫情期间，WFH成为常态。",
        "使用jieba分词：我来到北京清华大学",
        "Hello你好World世界",
        "abc中def文ghi",
        "中a文b字c",
        "A股和H股，ETF基金",
        "5G网络的下载速度达到1Gbps",
        "台積電TSMC的3奈米製程",
        "小明的email是xiaoming@example.cn",
        "【重要】Meeting改到3点，请准时参加！",
        "GPT模型生成的中文text质量越来越好",
        "我喜欢吃pizza和寿司sushi",
    ]
    en_words = ["data", "model", "API", "server", "GitHub", "Linux", "OK", "WiFi", "App", "PDF"]
    zh_pool = [c for c in "".join(ZH_SIMPLIFIED[:10]) if "\u4e00" <= c <= "\u9fcc"]
    for _ in range(10):
        parts = []
        for _ in range(rng.randint(4, 12)):
            if rng.random() < 0.4:
                parts.append(rng.choice(en_words) + rng.choice(["", " ", " "]))
            else:
                parts.append("".join(rng.choice(zh_pool) for _ in range(rng.randint(1, 6))))
        out.append("".join(parts) + rng.choice(["。", "！", "?", ""]))
    return out


def gen_ja_ko(rng: random.Random) -> list[str]:
    out = list(JA_TEXTS) + list(KO_TEXTS)
    hira = [chr(c) for c in range(0x3041, 0x3097)]
    kata = [chr(c) for c in range(0x30A1, 0x30FB)]
    hangul = [chr(c) for c in range(0xAC00, 0xD7A4)]
    for _ in range(3):
        out.append("".join(rng.choice(hira + kata) for _ in range(rng.randint(10, 60))))
    for _ in range(3):
        words = ["".join(rng.choice(hangul) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(3, 12))]
        out.append(" ".join(words) + ".")
    out.append(unicodedata.normalize("NFD", "대한민국의 수도는 서울입니다."))
    out.append(unicodedata.normalize("NFD", "ガギグゲゴ パピプペポ"))
    return out


def gen_cyrillic_greek(rng: random.Random) -> list[str]:
    out = list(CYRILLIC) + list(GREEK)
    ru = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
    for _ in range(4):
        words = ["".join(rng.choice(ru) for _ in range(rng.randint(2, 9))) for _ in range(rng.randint(4, 15))]
        s = " ".join(words)
        out.append(s.upper() if rng.random() < 0.5 else s.capitalize())
    gr_upper = "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ"
    for _ in range(4):
        words = ["".join(rng.choice(gr_upper) for _ in range(rng.randint(1, 7))) + "Σ" for _ in range(rng.randint(3, 8))]
        out.append(" ".join(words) + rng.choice([".", "", "!", " Σ"]))
    return out


def gen_rtl_indic(rng: random.Random) -> list[str]:
    out = list(ARABIC) + list(HEBREW) + list(INDIC)
    ar = [chr(c) for c in range(0x0621, 0x064B)]
    harakat = [chr(c) for c in range(0x064B, 0x0653)]
    for _ in range(3):
        words = []
        for _ in range(rng.randint(3, 9)):
            w = ""
            for _ in range(rng.randint(2, 6)):
                w += rng.choice(ar)
                if rng.random() < 0.5:
                    w += rng.choice(harakat)
            words.append(w)
        out.append(" ".join(words))
    deva_cons = [chr(c) for c in range(0x0915, 0x0939)]
    deva_signs = [chr(c) for c in range(0x093E, 0x094D)] + ["\u0901", "\u0902", "\u0903", "\u094d"]
    for _ in range(3):
        words = []
        for _ in range(rng.randint(3, 9)):
            w = ""
            for _ in range(rng.randint(1, 4)):
                w += rng.choice(deva_cons)
                if rng.random() < 0.7:
                    w += rng.choice(deva_signs)
            words.append(w)
        out.append(" ".join(words) + " ।")
    return out


def gen_emoji(rng: random.Random) -> list[str]:
    out = list(EMOJI)
    faces = [chr(c) for c in range(0x1F600, 0x1F650)]
    tones = [chr(c) for c in range(0x1F3FB, 0x1F400)]
    for _ in range(8):
        parts = []
        for _ in range(rng.randint(3, 10)):
            r = rng.random()
            if r < 0.3:
                parts.append(rng.choice(EN_NOUNS))
            elif r < 0.5:
                parts.append("\U0001F44B" + rng.choice(tones))
            elif r < 0.6:
                parts.append(rng.choice(faces) + "\u200d" + rng.choice(faces))
            else:
                parts.append(rng.choice(faces))
        out.append(" ".join(parts))
    return out


def gen_combining(rng: random.Random) -> list[str]:
    out = [
        "e\u0301",
        "\u00e9",
        "caf\u00e9",
        "cafe\u0301",
        "Cafe\u0301 CAFE\u0301 caf\u00e9",
        unicodedata.normalize("NFD", "résumé naïve coöperate Ångström"),
        unicodedata.normalize("NFC", "résumé naïve coöperate Ångström"),
        "Tiếng Việt có nhiều dấu",
        unicodedata.normalize("NFD", "Tiếng Việt có nhiều dấu"),
        "a\u0300\u0301\u0302\u0303\u0304\u0305",
        "\u0301\u0301\u0301",
        "\u0301abc",
        "ab\u0301cd",
        "ภาษาไทย สวัสดีครับ",
        "กินข้าวหรือยัง",
        "ที่นี่ น้ำ ไม้",
        "e\u0301e\u0301e\u0301e\u0301",
        "n\u0303 \u00f1 N\u0303",
        "o\u0338 \u00f8 =\u0338",
        "a\u034fb c\u034fd",
        "A\u20dd B\u20de",
        "\u0e01\u0e31\u0e49\u0e19",
        "Z\u0345",
        "\u1e9b\u0323",
    ]
    for _ in range(10):
        base = rng.choice(["zalgo", "he comes", "text", "Ζάλγκο", "залго", "混沌", "a", "HELLO world"])
        s = ""
        for ch in base:
            s += ch + "".join(rng.choice(ZALGO_MARKS) for _ in range(rng.randint(0, 12)))
        out.append(s)
    return out


def gen_fullwidth(rng: random.Random) -> list[str]:
    out = list(FULLWIDTH)
    for _ in range(6):
        s = english_sentence(rng)
        out.append("".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and rng.random() < 0.8 else
                           ("\u3000" if c == " " else c) for c in s))
    return out


def gen_case_mapping(rng: random.Random) -> list[str]:
    return list(CASE_MAPPING)


def gen_whitespace(rng: random.Random) -> list[str]:
    return list(WHITESPACE)


def gen_punct_only(rng: random.Random) -> list[str]:
    return list(PUNCT_ONLY)


def gen_short(rng: random.Random) -> list[str]:
    out = [
        # 1 code point
        "a", "A", "z", "0", "9", "_", "é", "中", "ß", "Σ", "İ", "ﬁ", "²", "\U0001F600", "\U00020000", "ー",
        # 2
        "ab", "AB", "Ab", "a ", " a", "中文", "é!", "e\u0301", "__", "12", "İİ", "ΑΣ", "a\U0001F600",
        # 3
        "abc", "ABC", "a b", "a-b", "日本語", "e\u0301e", "İab", "1.5", "x_y", "ΟΣ.", "Ⅻ½①", "a\x00b",
        # 4
        "abcd", "ABCD", "a bc", "ab c", "a  b", "中文字符", "İabc", "3.14", "1,00", "ΟΔΟΣ", "ΣΑΣ!",
        "😀a😀b", "__ab", "ǅabc", "ß ss",
        # lengths where lowercasing/filtering changes the count
        "İİİ", "ab\u0301c", "Aİ", "a.b.c.d", "a b c d e",
    ]
    for n in (1, 2, 3, 4):
        for _ in range(3):
            out.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789中文字éüñ") for _ in range(n)))
    return out


def gen_weights_ties(rng: random.Random) -> list[str]:
    """Texts whose 4-gram counts cross the package's internal thresholds
    (large_weight_cutoff = 50, uint8 range 255, batch_size = 200) and short
    texts with an even number of features (ties never set a bit)."""
    out = []
    # Equal weights: the value does not depend on n.
    for n in (1, 50, 51, 256, 1000):
        out.append("abcd" * n)
    for n in (52, 53, 54, 258, 259):
        out.append("x" * n)
    # Two heavy 4-grams, "xxxx" with weight n and "yyyy" with weight n - d,
    # plus a few dozen light ones: the bits where only "yyyy" is set are
    # decided by d and the light grams, so counts must be exact.
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in (50, 51, 52, 255, 256, 257, 258, 1000, 65536, 65537):
        for d in (1, 2):
            light = "".join(rng.choice(letters) for _ in range(rng.randint(30, 60)))
            out.append("x" * (n + 3) + " " + "y" * (n - d + 3) + " " + light)
    out.append("ab " * 200 + "end")
    out.append("the cat " * 60)
    # many distinct grams (> batch_size = 200 distinct features)
    out.append(" ".join(f"w{i:04d}" for i in range(260)))
    # 2, 4, 6 features -> ties possible
    out += ["abcde", "abcdef", "abcdefg", "abcdefgh", "zzzzz", "zzzzzz", "hello", "simhash"]
    return out


def gen_unicode_version(rng: random.Random) -> list[str]:
    """Characters whose treatment depends on the Unicode version (Python 3.11 =
    14.0.0).  Code points assigned after 14.0 are Cn here: not lower-cased,
    not \\w, and neither cased nor case-ignorable for the final-sigma rule."""
    return [
        "\U0001e030\U0001e031 modifier cyrillic (15.0 Lm)",
        "\U0001df25\U0001df26 latin (15.0 Ll)",
        "\U00031350\U00031351 CJK Ext H (15.0)",
        "\U00011f04\U00011f05 Kawi (15.0)",
        "\U0001e4d0\U0001e4d1 Nag Mundari (15.0)",
        "\ua7cb\u0264 rams horn (16.0)",
        "\ua7dc\u019b (16.0)",
        "\u1c89\u1c8a Cyrillic TJE (16.0)",
        "\U00010d50\U00010d70 Garay (16.0)",
        "\U00016ea0\U00016ebb Beria Erfe (17.0)",
        "\ua7c0\ua7c1 Old Polish O (14.0)",
        "\u0295 \u0295\u0295",
        "\u0391\u0295\u03a3",  # ʕ is Ll (cased) in 14.0 -> final sigma
        "\u0391\u03a3\u0295",
        "\u0391\U0001171e\u03a3",  # Ahom U+1171E is Mn (case-ignorable) in 14.0
        "\u0391\u1c89\u03a3",  # U+1C89 unassigned in 14.0 -> not final
        "\u0391\u1ad0\u03a3",  # U+1AD0 unassigned in 14.0
        "\u0391\u03a3\u1c8a",
        "\u0897abc\u0ece",
        "\U0001fae8\U0001fa77 emoji 15.0",
    ]


def gen_control(rng: random.Random) -> list[str]:
    return list(CONTROL)


def gen_long(rng: random.Random) -> list[str]:
    out = []
    # ~60 KB of varied English paragraphs.
    parts, size = [], 0
    while size < 60_000:
        p = english_paragraph(rng, 4, 10)
        parts.append(p)
        size += len(p) + 2
    out.append("\n\n".join(parts))
    # ~200 KB: one sentence repeated (huge weights, far above 255).
    s = "The quick brown fox jumps over the lazy dog. "
    out.append(s * (200_000 // len(s)))
    # ~120 KB (UTF-8) mixed scripts from the other categories' sentences.
    pool = ZH_SIMPLIFIED + ZH_TRADITIONAL + JA_TEXTS + KO_TEXTS + CYRILLIC + GREEK + ARABIC + HEBREW + INDIC
    parts, size = [], 0
    while size < 120_000:
        t = rng.choice(pool) if rng.random() < 0.7 else english_sentence(rng)
        parts.append(t)
        size += len(t.encode("utf-8")) + 1
    out.append(" ".join(parts))
    # ~60 KB: a single repeated letter (one 4-gram with weight ~60000).
    out.append("a" * 60_000)
    # ~90 KB (UTF-8): Chinese, sentences repeated with small variations.
    parts, size = [], 0
    while size < 90_000:
        t = rng.choice(ZH_SIMPLIFIED)
        if rng.random() < 0.3:
            i = rng.randrange(len(t))
            t = t[:i] + rng.choice("的一是在不了有和人这中大为上个国") + t[i + 1:]
        parts.append(t)
        size += len(t.encode("utf-8"))
    out.append("".join(parts))
    return out


CATEGORIES = [
    ("empty", lambda rng: [""]),
    ("english", gen_english),
    ("web", gen_web),
    ("chinese", gen_chinese),
    ("mixed_zh_en", gen_mixed),
    ("ja_ko", gen_ja_ko),
    ("cyrillic_greek", gen_cyrillic_greek),
    ("arabic_hebrew_devanagari", gen_rtl_indic),
    ("emoji", gen_emoji),
    ("combining", gen_combining),
    ("fullwidth", gen_fullwidth),
    ("case_mapping", gen_case_mapping),
    ("whitespace", gen_whitespace),
    ("punct_only", gen_punct_only),
    ("short", gen_short),
    ("control", gen_control),
    ("weights_ties", gen_weights_ties),
    ("unicode_version", gen_unicode_version),
    ("long", gen_long),
]


def build_records() -> list[dict]:
    from simhash import Simhash

    seen: set[str] = set()
    records = []
    for kind, gen in CATEGORIES:
        rng = random.Random(f"{SEED}:{kind}")
        for text in gen(rng):
            if text in seen:
                continue
            seen.add(text)
            text.encode("utf-8")  # raises on lone surrogates
            value = Simhash(text).value
            ref = reference_simhash(text)
            if value != ref:
                raise SystemExit(
                    f"reference mismatch for {kind} {text[:40]!r}: package {value:016x}, reference {ref:016x}"
                )
            records.append({"text": text, "value": f"{value:016x}", "kind": kind})
    return records


_LINE_BREAK_ESCAPES = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def serialize(records: list[dict]) -> bytes:
    lines = []
    for r in records:
        line = json.dumps(r, ensure_ascii=False)
        for raw, esc in _LINE_BREAK_ESCAPES.items():
            line = line.replace(raw, esc)  # only occur inside JSON strings
        lines.append(line)
    return ("\n".join(lines) + "\n").encode("utf-8")


def check_environment(allow_mismatch: bool) -> None:
    problems = []
    if version("simhash") != "2.1.2":
        problems.append(f"simhash {version('simhash')} installed, need 2.1.2")
    if int(version("numpy").split(".")[0]) >= 2:
        problems.append(f"numpy {version('numpy')} installed, need < 2")
    import simhash

    if not hasattr(simhash.Simhash, "_tokenize"):
        problems.append(f"module simhash at {simhash.__file__} is not the pure-Python package")
    if problems:
        raise SystemExit("; ".join(problems))
    if unicodedata.unidata_version != EXPECTED_UNICODE and not allow_mismatch:
        raise SystemExit(
            f"Python {sys.version.split()[0]} has Unicode {unicodedata.unidata_version}, the fixture "
            f"is defined with {EXPECTED_UNICODE} (Python 3.11); use --allow-unicode-mismatch to override"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="regenerate in memory and compare with --out; exit 1 on difference")
    ap.add_argument("--allow-unicode-mismatch", action="store_true")
    args = ap.parse_args()

    check_environment(args.allow_unicode_mismatch)
    records = build_records()
    data = serialize(records)
    if len(data) > MAX_FIXTURE_BYTES:
        raise SystemExit(f"fixture too large: {len(data)} bytes")

    counts = Counter(r["kind"] for r in records)
    summary = ", ".join(f"{k}={counts[k]}" for k, _ in CATEGORIES)
    if args.check:
        old = args.out.read_bytes() if args.out.exists() else b""
        if old != data:
            print(f"{args.out}: differs from a fresh generation", file=sys.stderr)
            sys.exit(1)
        print(f"{args.out}: up to date ({len(records)} records)", file=sys.stderr)
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out}: {len(records)} records, {len(data)} bytes ({summary})", file=sys.stderr)


if __name__ == "__main__":
    main()
