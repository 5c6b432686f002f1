# Shared set-up of eval.sh and sohu_dedup.sh (sourced, not run): builds neardup, makes a
# temporary directory that is removed on exit, and writes the relabelled Sohu sets into it
# (tools/bench/sohu_pairs.py).
#
#     sohu_setup ROOT SOHU_DIR      # sets NEARDUP (the binary) and TMP (the directory)
sohu_setup() {
    cargo build --release -q -p neardup --manifest-path "$1/Cargo.toml"
    NEARDUP=$1/target/release/neardup
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
    python3 "$1/tools/bench/sohu_pairs.py" "$2" "$TMP" >/dev/null
}
