//! Database locations: a directory (redb), `redis://[user:password@]host:port[/n][?name=NAME]`
//! (one Redis server; `rediss://` over TLS)
//! or `redis+cluster://host:port,host:port,...[?name=NAME]` (a Redis Cluster, any of its nodes).

use std::path::PathBuf;

use crate::db::{NearDupDb, OpenOptions};
use crate::error::{Result, StoreError};
use crate::redb_store::RedbStore;
use crate::redis_store::RedisStore;
use crate::store::Store;

/// The default database name inside Redis (in every key's hash tag: `{name}` for the keys kept
/// in order on one node, `{name:ID}` for each document's body).
pub const DEFAULT_REDIS_NAME: &str = "neardup";

/// A parsed database location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbSpec {
    /// A redb database in this directory.
    Dir(PathBuf),
    /// A single Redis server (its URL without our `name` parameter) and the database name.
    Redis {
        /// The server's URL, as the redis crate reads it.
        url: String,
        /// The database name (in every key's hash tag).
        name: String,
    },
    /// A Redis Cluster: node URLs and the database name.
    Cluster {
        /// One `redis://host:port` URL per node given.
        nodes: Vec<String>,
        /// The database name (in every key's hash tag).
        name: String,
    },
}

impl DbSpec {
    /// Parses a location.
    pub fn parse(spec: &str) -> Result<DbSpec> {
        let invalid = |reason: &str| StoreError::InvalidSpec {
            spec: crate::redact(spec),
            reason: reason.to_string(),
        };
        if let Some(rest) = spec.strip_prefix("redis+cluster://") {
            let (hosts, name) = split_name(rest);
            let nodes: Vec<String> = hosts
                .trim_end_matches('/')
                .split(',')
                .filter(|h| !h.is_empty())
                .map(|h| format!("redis://{h}"))
                .collect();
            if nodes.is_empty() {
                return Err(invalid("no cluster node given"));
            }
            return Ok(DbSpec::Cluster {
                nodes,
                name: name.map_err(|r| invalid(&r))?,
            });
        }
        if spec.starts_with("redis://") || spec.starts_with("rediss://") {
            let (url, name) = split_name(spec);
            return Ok(DbSpec::Redis {
                url: url.to_string(),
                name: name.map_err(|r| invalid(&r))?,
            });
        }
        if spec.contains("://") {
            return Err(invalid(
                "expected a directory, redis://host:port or redis+cluster://host:port,...",
            ));
        }
        if spec.is_empty() {
            return Err(invalid("empty"));
        }
        Ok(DbSpec::Dir(PathBuf::from(spec)))
    }
}

/// Splits `...?name=NAME` off a URL; the name defaults to [`DEFAULT_REDIS_NAME`].
fn split_name(url: &str) -> (&str, Result<String, String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url, Ok(DEFAULT_REDIS_NAME.to_string()));
    };
    let name = match query.strip_prefix("name=") {
        Some(name) if valid_name(name) => Ok(name.to_string()),
        _ => Err("the only parameter is name=NAME (letters, digits, '-', '_', '.')".to_string()),
    };
    (base, name)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Opens the store a location names; each of its calls takes at most
/// [`OpenOptions::timeout`]; `rediss://` trusts [`OpenOptions::redis_ca_file`] if given. Under
/// [`OpenOptions::must_exist`], a directory that holds no database is
/// [`StoreError::NoDatabase`] (and is not created); a Redis is only connected to, which creates
/// nothing.
pub fn open_store(spec: &str, options: &OpenOptions) -> Result<Box<dyn Store>> {
    Ok(match DbSpec::parse(spec)? {
        DbSpec::Dir(dir) if options.must_exist && !RedbStore::holds_database(&dir) => {
            return Err(StoreError::NoDatabase(dir.display().to_string()))
        }
        DbSpec::Dir(dir) => Box::new(RedbStore::open_within(
            &dir,
            options.timeout,
            options.store_cache_bytes(),
        )?),
        DbSpec::Redis { url, name } => Box::new(RedisStore::open(&url, &name, options)?),
        DbSpec::Cluster { nodes, name } => {
            Box::new(RedisStore::open_cluster(&nodes, &name, options)?)
        }
    })
}

/// Opens the database a location names (see the module documentation for the forms).
pub fn open_db(spec: &str, options: OpenOptions) -> Result<NearDupDb> {
    NearDupDb::open(open_store(spec, &options)?, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_locations() {
        assert_eq!(
            DbSpec::parse("data/db").unwrap(),
            DbSpec::Dir("data/db".into())
        );
        assert_eq!(
            DbSpec::parse("redis://127.0.0.1:6379").unwrap(),
            DbSpec::Redis {
                url: "redis://127.0.0.1:6379".into(),
                name: DEFAULT_REDIS_NAME.into()
            }
        );
        assert_eq!(
            DbSpec::parse("redis://h:1/2?name=news").unwrap(),
            DbSpec::Redis {
                url: "redis://h:1/2".into(),
                name: "news".into()
            }
        );
        assert_eq!(
            DbSpec::parse("redis+cluster://a:1,b:2?name=x").unwrap(),
            DbSpec::Cluster {
                nodes: vec!["redis://a:1".into(), "redis://b:2".into()],
                name: "x".into()
            }
        );
        assert!(DbSpec::parse("http://x").is_err());
        assert!(DbSpec::parse("redis://h:1?name=a b").is_err());
        assert!(DbSpec::parse("redis+cluster://").is_err());
    }
}
