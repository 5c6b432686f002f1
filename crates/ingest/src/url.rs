//! URL canonicalisation (todo).
