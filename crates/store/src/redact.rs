//! Secrets out of everything shown: [`redact`] hides the password of every URL in a text.

/// What a hidden password is shown as.
const MASK: &str = "***";

/// `text` with the password of every URL in it replaced by `***`:
/// `redis://user:p%40ss@host:6379/0` is shown as `redis://user:***@host:6379/0`, in a location,
/// an error message or a log line alike. Everything before the last `@` of a URL's authority is
/// its user information (as URL parsers read it, so a password with a raw `@` is hidden whole);
/// only the user name before its first `:` stays visible. The one rule used wherever a database
/// location, a Redis URL or an error of the Redis client is shown.
pub fn redact(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        shown.push_str(before);
        let end = after.find(ends_authority).unwrap_or(after.len());
        let (authority, tail) = after.split_at(end);
        shown.push_str(&redact_authority(authority));
        rest = tail;
    }
    shown.push_str(rest);
    shown
}

/// Whether `c` ends a URL's authority (`user:password@host:port`) inside a text.
fn ends_authority(c: char) -> bool {
    matches!(c, '/' | '?' | '#' | '"' | '\'' | '`') || c.is_whitespace()
}

/// `user:password@hosts` as `user:***@hosts`; an authority without a password as it is.
fn redact_authority(authority: &str) -> String {
    let Some((userinfo, hosts)) = authority.rsplit_once('@') else {
        return authority.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _password)) => format!("{user}:{MASK}@{hosts}"),
        None => authority.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn hides_every_password_and_keeps_the_rest() {
        for (given, shown) in [
            (
                "redis://:p%40ss@127.0.0.1:6379/0",
                "redis://:***@127.0.0.1:6379/0",
            ),
            (
                "rediss://user:pw@h:1?name=x",
                "rediss://user:***@h:1?name=x",
            ),
            ("redis://:p@ss@h:1", "redis://:***@h:1"),
            ("redis://user@h:1/2", "redis://user@h:1/2"),
            ("redis://h:1", "redis://h:1"),
            ("data/db", "data/db"),
            (
                "redis+cluster://:pw@a:1,b:2?name=n",
                "redis+cluster://:***@a:1,b:2?name=n",
            ),
            (
                "cannot open \"redis://u:secret@h:1\": refused; also redis://:x@y:2 failed",
                "cannot open \"redis://u:***@h:1\": refused; also redis://:***@y:2 failed",
            ),
        ] {
            assert_eq!(redact(given), shown, "{given}");
        }
    }
}
