#!/usr/bin/env python3
"""Write a JSONL corpus of short news leads ({"id": n, "text": ...}, 200-500 bytes of text each)
with planted exact and near copies, fast and in constant memory, for the scale benchmark.

Language: a vocabulary of English function words, synthetic content words, names and numbers,
drawn with a Zipf law (Zipf-Mandelbrot, s = 1) into a 4-million-word tape once; a sentence is a
random slice of the tape (commas inside), capitalised and ended by a full stop; a lead is two to
six sentences, one in five after a dateline ("CITY (Agency) - "). Each lead is, by default:
  - an original (about 85%);
  - an exact copy of an earlier lead (--exact, 5%);
  - a near copy of an earlier lead (--near, 10%): one to three words replaced, dropped or
    inserted (70%), a sentence added (15%) or a sentence dropped (15%), falling back to word
    edits when the result would leave 200-500 bytes. Earlier leads are drawn from a reservoir
    sample of originals and near copies (so copies of copies make chains);
  - a member of one of --families big families: a template lead (of 400 bytes or more) and
    --family-size copies of it, each with one to four words edited, spread evenly over the
    stream.
Originals are made in batches by --jobs processes (default: one a core; the output is the same
for any number). Only the reservoir, the tape and a few batches are held: memory does not grow
with --documents. What was planted is printed at the end (counts of each kind), with the speed.

usage: make_news_leads.py OUT.jsonl --documents N [--seed 1] [--exact 0.05] [--near 0.10]
                          [--families 3] [--family-size 10000] [--jobs CORES]
"""
import argparse
import collections
import itertools
import multiprocessing
import os
import random
import string
import time

FUNCTION_WORDS = (
    "the of and to a in that is was for on it with as he said by at from his be an have has "
    "are not but had this which were they its after would their who been will more than also "
    "we one two new over up about into out other some when there all could can year people "
    "first last before while between against under three percent million officials police "
    "government week day told since may because during"
).split()
SYLLABLES = [c + v for c in "bcdfghklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "ea")]
ENDINGS = ["", "", "", "s", "ed", "ing", "er", "ion", "al", "ly", "ment", "ity"]
AGENCIES = ["Reuters", "AP", "AFP", "Bloomberg", "dpa"]
TAPE_WORDS = 1 << 22
VOCABULARY_SEED = 20241125
RESERVOIR = 100_000
CAPITAL = {c: c.upper() for c in string.ascii_letters + string.digits}
BATCH = 4096


def vocabulary(rng):
    """Words in rank order: function words first, then content words, names and numbers mixed
    (a name every 9th rank, a number every 13th), about 60,000 in all."""
    words, seen = list(FUNCTION_WORDS), set(FUNCTION_WORDS)
    rank = 0
    while len(words) < 60_000:
        rank += 1
        if rank % 13 == 0:
            word = rng.choice([str(rng.randint(2, 999)), f"{rng.randint(1, 99)}.{rng.randint(1, 9)}",
                               str(rng.randint(1990, 2026))])
        else:
            syllables = 1 + min(3, int(rng.expovariate(1.0) + len(words) / 20_000))
            word = "".join(rng.choice(SYLLABLES) for _ in range(syllables)) + rng.choice(ENDINGS)
            if rank % 9 == 0:
                word = word.capitalize()
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def word_tape(words, rng):
    """TAPE_WORDS words drawn by a Zipf law over `words`, one in twenty followed by a comma,
    joined by spaces: the text sentences are cut from."""
    weights = itertools.accumulate(1.0 / (rank + 2.7) for rank in range(len(words)))
    cumulative = list(weights)
    drawn = rng.choices(words, cum_weights=cumulative, k=TAPE_WORDS)
    for i in range(0, TAPE_WORDS - 20, 20):
        drawn[i + rng.randrange(20)] += ","
    return " ".join(drawn)


class Leads:
    """Makes original leads and edited copies from one random generator and one word tape."""

    def __init__(self, seed):
        words = vocabulary(random.Random(VOCABULARY_SEED))
        self.seed, self.rng = seed, random.Random(seed)
        self.words = words[: len(words) // 4]
        self.tape = word_tape(words, self.rng)
        self.span = len(self.tape) - 1000
        self.cities = [w.upper() for w in words if w[:1].isupper()][:300]

    def sentence(self, length):
        """About `length` bytes of tape from a random word on, capitalised, with a full stop."""
        tape = self.tape
        start = tape.find(" ", int(self.rng.random() * self.span)) + 1
        end = tape.find(" ", start + length)
        return CAPITAL[tape[start]] + tape[start + 1 : end].rstrip(",") + "."

    def original(self, shortest=215):
        """A new lead of sentences of 60-200 bytes, `shortest`-470 bytes before its last word and
        full stop (the body of `sentence` is inlined: this loop is the generator's speed)."""
        rand, tape, span = self.rng.random, self.tape, self.span
        find = tape.find
        target = shortest + int(rand() * (470 - shortest))
        if rand() < 0.2:
            city = self.cities[int(rand() * len(self.cities))]
            parts = [f"{city} ({AGENCIES[int(rand() * len(AGENCIES))]}) -"]
            size = len(parts[0]) + 1
        else:
            parts, size = [], 0
        while size < target:
            start = find(" ", int(rand() * span)) + 1
            end = find(" ", start + min(target - size, 60 + int(rand() * 140)))
            parts.append(CAPITAL[tape[start]] + tape[start + 1 : end].rstrip(",") + ".")
            size += end - start + 2
        return " ".join(parts)

    def edit_words(self, text, edits):
        """`text` with `edits` words replaced, dropped or inserted at random places, kept
        within 200-500 bytes (drawn again in the rare case it is not)."""
        edited = self.try_edit_words(text, edits)
        while not 200 <= len(edited) <= 500:
            edited = self.try_edit_words(text, edits)
        return edited

    def try_edit_words(self, text, edits):
        """`text` with `edits` words replaced, dropped or inserted at random places (a word is
        dropped only from a lead of 250 bytes or more, inserted only into one under 450)."""
        words = text.split(" ")
        rand = self.rng.random
        for _ in range(edits):
            i = int(rand() * len(words))
            choice = rand()
            new = self.words[int(rand() * len(self.words))]
            if choice < 0.25 and len(text) >= 250:
                del words[i]
            elif choice < 0.5 and len(text) < 450:
                words.insert(i, new)
            else:
                words[i] = new
        return " ".join(words)

    def near_copy(self, text):
        """A near copy of `text` and its kind: word edits, a sentence added or dropped."""
        choice = self.rng.random()
        if choice < 0.15:
            added = f"{text} {self.sentence(40 + int(self.rng.random() * 60))}"
            if len(added) <= 500:
                return added, "sentence added"
        elif choice < 0.30:
            sentences = text.split(". ")
            if len(sentences) > 2:
                del sentences[1 + int(self.rng.random() * (len(sentences) - 1))]
                dropped = ". ".join(sentences)
                if not dropped.endswith("."):
                    dropped += "."
                if len(dropped) >= 200:
                    return dropped, "sentence dropped"
        return self.edit_words(text, 1 + int(self.rng.random() * 3)), "word edits"


class Reservoir:
    """A uniform sample of the items offered to it so far (Algorithm R), of at most RESERVOIR."""

    def __init__(self, rng):
        self.rng, self.items, self.offered = rng, [], 0

    def offer(self, text):
        self.offered += 1
        if len(self.items) < RESERVOIR:
            self.items.append(text)
        else:
            slot = int(self.rng.random() * self.offered)
            if slot < RESERVOIR:
                self.items[slot] = text

    def pick(self):
        return self.items[int(self.rng.random() * len(self.items))]


WORKER = None


def start_worker(seed):
    """Makes the `Leads` of a worker process (its tape: the same for every process of a seed)."""
    global WORKER
    WORKER = Leads(seed)


def original_batch(index):
    """BATCH originals, the same for a seed and `index` in whichever process makes them."""
    WORKER.rng.seed(f"{WORKER.seed}/{index}")
    return [WORKER.original() for _ in range(BATCH)]


def originals(seed, jobs):
    """The original leads of a seed, made in batches by `jobs` worker processes (in this one when
    `jobs` is 1), at most 2 x `jobs` batches ahead of the reader."""
    if jobs == 1:
        start_worker(seed)
        for index in itertools.count():
            yield from original_batch(index)
    else:
        with multiprocessing.Pool(jobs, start_worker, (seed,)) as pool:
            ahead = collections.deque(pool.apply_async(original_batch, (i,)) for i in range(2 * jobs))
            for index in itertools.count(len(ahead)):
                yield from ahead.popleft().get()
                ahead.append(pool.apply_async(original_batch, (index,)))


def write_corpus(out, args):
    """Writes args.documents leads to `out` and returns the counts of each kind planted."""
    leads = Leads(args.seed)
    rand = leads.rng.random
    new_original = originals(args.seed, args.jobs).__next__
    reservoir = Reservoir(leads.rng)
    counts = dict.fromkeys(["original", "exact copy", "word edits", "sentence added",
                            "sentence dropped", "family template", "family member"], 0)
    families = []
    family_share = args.families * (args.family_size + 1) / args.documents
    exact, exact_or_near = args.exact, args.exact + args.near
    family_credit = 0.0
    lines = []
    for n in range(args.documents):
        family_credit += family_share
        if family_credit >= 1.0:
            family_credit -= 1.0
            text, kind = family_member(leads, families, args)
        elif not reservoir.items:
            text, kind = new_original(), "original"
        else:
            draw = rand()
            if draw < exact:
                text, kind = reservoir.pick(), "exact copy"
            elif draw < exact_or_near:
                text, kind = leads.near_copy(reservoir.pick())
            else:
                text, kind = new_original(), "original"
        if kind != "exact copy" and not kind.startswith("family"):
            reservoir.offer(text)
        counts[kind] += 1
        lines.append(f'{{"id":{n},"text":"{text}"}}\n')
        if len(lines) == BATCH:
            out.write("".join(lines))
            lines.clear()
    out.write("".join(lines))
    return counts, [size for _, size in families]


def family_member(leads, families, args):
    """The next member of the big families, round robin: a new family's template first (a long
    lead, 400 bytes or more: its copies stay near it), then copies of it with 1-4 words edited."""
    index = sum(size for _, size in families) % args.families
    if index == len(families):
        families.append([leads.original(400), 1])
        return families[index][0], "family template"
    families[index][1] += 1
    return leads.edit_words(families[index][0], 1 + int(leads.rng.random() * 4)), "family member"


def generator_arguments(doc, count, exact, near):
    """The arguments of this folder's generators: OUT, the `count` option (required), --seed,
    and the shares of exact and near copies (defaults `exact` and `near`)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("out", help="the JSONL file to write")
    ap.add_argument(count, type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exact", type=float, default=exact, help="share of exact copies")
    ap.add_argument("--near", type=float, default=near, help="share of near copies")
    return ap


def parse_generator_arguments(ap):
    """The parsed arguments of `generator_arguments`, the shares checked."""
    args = ap.parse_args()
    if args.exact < 0 or args.near < 0 or args.exact + args.near > 1:
        ap.error("--exact and --near must be shares that sum to at most 1")
    return args


class CountingWriter:
    """A text file's `write`, counting the characters written (ASCII: the bytes), so that a
    pipe or FIFO (e.g. into `zstd`), which has no position to ask, can be written too."""

    def __init__(self, out):
        self.out, self.size = out, 0

    def write(self, text):
        self.size += len(text)
        return self.out.write(text)


def write_timed(path, what, write):
    """Runs `write` on a new file at `path` (or a FIFO), prints what it wrote (`what`), its size
    and speed (over the wall time and over the CPU time), and returns what `write` returned."""
    started, cpu = time.perf_counter(), time.process_time()
    with open(path, "w", encoding="ascii", buffering=1 << 22) as file:
        out = CountingWriter(file)
        result = write(out)
        size = out.size
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{path}: {what}, {size / 1e6:.0f} MB in {seconds:.1f} s ({size / 1e6 / seconds:.0f} MB/s; "
          f"this process: {cpu:.1f} s of CPU, {size / 1e6 / cpu:.0f} MB/s)")
    return result


def main():
    ap = generator_arguments(__doc__, "--documents", exact=0.05, near=0.10)
    ap.add_argument("--families", type=int, default=3, help="big families of near copies")
    ap.add_argument("--family-size", type=int, default=10_000, help="copies in each family")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(),
                    help="processes making original leads (the output does not depend on it)")
    args = parse_generator_arguments(ap)
    if args.families * (args.family_size + 1) > args.documents // 2:
        ap.error("the families would be more than half of the documents")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    counts, family_sizes = write_timed(args.out, f"{args.documents} leads",
                                       lambda out: write_corpus(out, args))
    near = counts["word edits"] + counts["sentence added"] + counts["sentence dropped"]
    print(f"planted: {counts['original']} originals, {counts['exact copy']} exact copies, {near} near "
          f"copies ({counts['word edits']} with 1-3 words edited, {counts['sentence added']} with a "
          f"sentence added, {counts['sentence dropped']} with a sentence dropped); "
          f"{len(family_sizes)} families of {'/'.join(map(str, family_sizes))} leads "
          f"(a template and its copies with 1-4 words edited)")


if __name__ == "__main__":
    main()
