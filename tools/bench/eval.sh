#!/usr/bin/env bash
# Detection quality on the labelled sets beside the project (never copied into it):
#
#     tools/bench/eval.sh DATA_DIR        # e.g. ../shared/data
#
# Runs `neardup eval` (default options, then alternatives) and the peers
# (tools/bench/eval_peers.py in the peers venv) on CopyCat (strict: positive 3;
# lenient: positive 3,2; negative 0.5) and on both Sohu sets (relabelled by
# tools/bench/sohu_pairs.py into a temporary directory: positives = label 5 with
# character-bigram containment >= 0.8 and byte-identical pairs, negatives = label 0),
# and prints one table. Skips, with a message, when DATA_DIR has no data.
# The Sohu end-to-end counts (`neardup dedup` on every sentence) are tools/bench/sohu_dedup.sh.
set -euo pipefail

DATA=${1:?usage: eval.sh DATA_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${NEARDUP_PEERS_VENV:-/work/venv-peers}/bin/python
COPYCAT=$DATA/copycat-canonical-pairs.jsonl
SOHU=$DATA/sohu-text-matching-zh
if [[ ! -f $COPYCAT || ! -d $SOHU ]]; then
    echo "eval.sh: no evaluation data in $DATA (copycat-canonical-pairs.jsonl, sohu-text-matching-zh/); skipped" >&2
    exit 0
fi
# shellcheck source=tools/bench/sohu_setup.sh
source "$ROOT/tools/bench/sohu_setup.sh"
sohu_setup "$ROOT" "$SOHU"

# A profile file: the default profile with some fields replaced.
profile() {
    "$NEARDUP" fingerprint --show-profile --profile "$1" | python3 -c '
import json, sys
p = json.load(sys.stdin)
for kv in sys.argv[1:]:
    k, v = kv.split("=", 1)
    p[k] = json.loads(v)
print(json.dumps(p))' "${@:2}" >"$TMP/$2.json"
    echo "$TMP/$2.json"
}
WORD3=$(profile web name='"web-word3"' features='{"kind":"word-shingles","width":3}')
KEYWORDS=$(profile zh name='"zh-keywords20"' weighting='"jieba-tf-idf"' top_k=20)

printf '%-10s %-44s %-48s %6s %6s %6s %4s %4s %4s %4s  %s\n' set system decision P R F1 TP FP FN TN flagged
row() { # SET SYSTEM EVAL-ARGS...
    local set=$1 system=$2
    shift 2
    "$NEARDUP" eval "$@" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
flagged = " ".join("L%g:%d/%d" % (l["label"], l["flagged"], l["pairs"]) for l in r["by_label"])
print("%-10s %-44s %-48s %6.3f %6.3f %6.3f %4d %4d %4d %4d  %s" % (sys.argv[1], sys.argv[2], r["decision"][:48],
      r["precision"], r["recall"], r["f1"], r["tp"], r["fp"], r["fn_"], r["tn"], flagged))' "$set" "$system"
}
peers() { # SET PEERS-ARGS...
    local set=$1
    shift
    "$PY" "$ROOT/tools/bench/eval_peers.py" "$@" --json | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("%-10s %-44s %-48s %6.3f %6.3f %6.3f %4d %4d %4d %4d" % (sys.argv[1], "peer", r["peer"][:48],
          r["precision"], r["recall"], r["f1"], r["tp"], r["fp"], r["fn"], r["tn"]))' "$set"
}

for labels in "strict 3" "lenient 3,2"; do
    set -- $labels
    name=copycat-$1 pos=$2
    args=("$COPYCAT" --positive "$pos" --negative 0.5)
    row "$name" "neardup web (default)" "${args[@]}"
    row "$name" "neardup web" "${args[@]}" --method simhash --k 3
    row "$name" "neardup web" "${args[@]}" --method simhash --k 6
    row "$name" "neardup web" "${args[@]}" --method cascade --k 6
    row "$name" "neardup web" "${args[@]}" --method jaccard
    row "$name" "neardup web" "${args[@]}" --method minhash
    row "$name" "neardup web-word3 (old default)" "${args[@]}" --profile-file "$WORD3" --method simhash --k 3
    row "$name" "neardup web-word3 (old default)" "${args[@]}" --profile-file "$WORD3"
    row "$name" "neardup python-simhash" "${args[@]}" --profile python-simhash --method simhash --k 3
    peers "$name" "${args[@]}"
done

for set in dd dc; do
    args=("$TMP/$set.jsonl" --text-a-field sentence1 --text-b-field sentence2 --positive 6,7 --negative 0)
    row "sohu-$set" "neardup zh-short (chosen)" "${args[@]}" --profile zh-short --method containment --threshold 0.95 --min-length-ratio 0.2
    row "sohu-$set" "neardup zh-short" "${args[@]}" --profile zh-short --method containment --threshold 0.9 --min-length-ratio 0.2
    row "sohu-$set" "neardup zh-short" "${args[@]}" --profile zh-short --method containment --threshold 0.95
    row "sohu-$set" "neardup zh-short" "${args[@]}" --profile zh-short --method containment --threshold 0.8
    row "sohu-$set" "neardup zh" "${args[@]}" --profile zh --method containment --threshold 0.95 --min-length-ratio 0.2
    row "sohu-$set" "neardup zh" "${args[@]}" --profile zh --method containment --threshold 0.9 --min-length-ratio 0.25
    row "sohu-$set" "neardup zh-short" "${args[@]}" --profile zh-short --method simhash --k 3
    row "sohu-$set" "neardup zh-short (default cascade)" "${args[@]}" --profile zh-short
    row "sohu-$set" "neardup zh" "${args[@]}" --profile zh --method simhash --k 3
    row "sohu-$set" "neardup zh (default cascade)" "${args[@]}" --profile zh
    row "sohu-$set" "neardup zh" "${args[@]}" --profile zh --method jaccard --threshold 0.5
    row "sohu-$set" "neardup zh" "${args[@]}" --profile zh --method containment --threshold 0.5
    row "sohu-$set" "neardup zh-keywords20 (old zh)" "${args[@]}" --profile-file "$KEYWORDS" --method simhash --k 3
    row "sohu-$set" "neardup web" "${args[@]}" --method simhash --k 3
    row "sohu-$set" "neardup web (default)" "${args[@]}"
    peers "sohu-$set" "${args[@]}"
done
