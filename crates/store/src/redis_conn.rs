//! A connection to the Redis of a database: one server, or a Redis Cluster (connections to
//! every node, following its topology), and `WAIT` on the node a key lives on.

use std::time::Duration;

use redis::cluster::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr};
use redis::{Cmd, ConnectionLike, RedisResult, Value};

/// A connection to one server or to a cluster.
pub(crate) enum Conn {
    /// One server.
    Single(redis::Connection),
    /// A cluster.
    Cluster(Box<ClusterConnection>),
}

impl Conn {
    /// The connection as the redis crate's commands take it.
    fn like(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Conn::Single(conn) => conn,
            Conn::Cluster(conn) => conn,
        }
    }

    /// `WAIT 1 timeout` on the node holding `key`: how many replicas (0 or 1) acknowledged
    /// every write this connection made there, waiting at most `timeout` for one.
    pub(crate) fn replicas_acknowledging(
        &mut self,
        key: &str,
        timeout: Duration,
    ) -> RedisResult<u64> {
        let mut wait = redis::cmd("WAIT");
        wait.arg(1).arg(timeout.as_millis() as u64);
        match self {
            Conn::Single(conn) => wait.query(conn),
            Conn::Cluster(conn) => {
                let node = Route::with_slot(Slot::for_key(key), SlotAddr::Master);
                let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(node));
                Ok(redis::from_redis_value(conn.route_command(&wait, route)?)?)
            }
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.like().req_packed_command(cmd)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.like().req_packed_commands(cmd, offset, count)
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        self.like().req_command(cmd)
    }

    fn supports_pipelining(&self) -> bool {
        match self {
            Conn::Single(conn) => conn.supports_pipelining(),
            Conn::Cluster(conn) => conn.supports_pipelining(),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(conn) => conn.get_db(),
            Conn::Cluster(conn) => conn.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        self.like().check_connection()
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Single(conn) => conn.is_open(),
            Conn::Cluster(conn) => conn.is_open(),
        }
    }
}
