//! Mirrors (todo).
