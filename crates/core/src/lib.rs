//! neardup-core: text → features → fingerprints, and similarity measures.
