//! A table's log read by `COPY … TO STDOUT (FORMAT binary)`: cheaper per
//! row than a query's rows, for the cold load of a long log. The copy data
//! comes as raw chunks; [`CopyRows`] decodes them into [`EventRows`]
//! (seq, type, format version and data text).
//!
//! Each column a row carries costs PostgreSQL a send function call and its
//! bytes on the socket, and the server produces the rows of a cold load on
//! one core: the copy carries `data` as stored (the binary form of `json`
//! is its text, so no cast), and `v` only where it is not the current
//! format (a null otherwise: no call, four bytes).

use domain::EVENT_VERSION;
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::{EventData, EventRows};

/// A read-only transaction in which a table's log is read in seq order by
/// walking its primary key, whatever the statistics say. A table's rows
/// are estimated from the average table: a long log thought short was read
/// by a bitmap scan and sorted, on disk past `work_mem`, at twice the cost.
/// Sorting is disabled for this transaction alone (`SET LOCAL`), in the
/// round trip that begins it.
#[derive(Debug)]
pub struct LogCopy(Transaction<'static, Postgres>);

impl LogCopy {
    pub async fn begin(pool: &PgPool) -> Result<Self, sqlx::Error> {
        pool.begin_with("BEGIN READ ONLY; SET LOCAL enable_sort = off")
            .await
            .map(Self)
    }

    /// Every event after `after` as seq, type and data text: the raw copy
    /// data, to decode with [`CopyRows`]. The statement takes no
    /// parameters; the values written into it are a UUID and an integer.
    pub async fn data_after(
        &mut self,
        table_id: Uuid,
        after: i64,
    ) -> Result<futures_util::stream::BoxStream<'_, Result<bytes::Bytes, sqlx::Error>>, sqlx::Error>
    {
        let statement = format!(
            "COPY ({}) TO STDOUT (FORMAT binary)",
            query(table_id, after)
        );
        self.0.copy_out_raw(&statement).await
    }

    /// The plan PostgreSQL follows for [`Self::data_after`], one line a
    /// node (what the tests check, and a way to look).
    pub async fn plan(&mut self, table_id: Uuid, after: i64) -> Result<Vec<String>, sqlx::Error> {
        let explain = format!("EXPLAIN {}", query(table_id, after));
        sqlx::query_scalar(&explain).fetch_all(&mut *self.0).await
    }

    /// Ends the transaction (it wrote nothing).
    pub async fn end(self) -> Result<(), sqlx::Error> {
        self.0.commit().await
    }
}

/// The events after `after` in seq order, as seq, type, format (null for
/// the current one) and data text.
fn query(table_id: Uuid, after: i64) -> String {
    format!(
        "SELECT seq, type, NULLIF(v, {EVENT_VERSION}), data FROM events \
         WHERE table_id = '{table_id}' AND seq > {after} ORDER BY seq"
    )
}

/// A decoder of the binary copy data of [`LogCopy::data_after`], fed chunk by
/// chunk (chunks may cut rows anywhere). PostgreSQL sends a row a chunk, so
/// a chunk is decoded where it lies; only a row it cuts is kept, to finish
/// with the next.
#[derive(Debug, Default)]
pub struct CopyRows {
    /// What the last chunks left of a row they cut.
    buf: Vec<u8>,
    header_read: bool,
    ended: bool,
}

const COPY_SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

impl CopyRows {
    /// Decodes the complete rows of `chunk` (and of what was left of the
    /// previous ones) into `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut EventRows) -> Result<(), String> {
        if self.buf.is_empty() {
            let used = self.decode(chunk, out)?;
            self.buf.extend_from_slice(&chunk[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.buf);
            buf.extend_from_slice(chunk);
            let used = self.decode(&buf, out)?;
            buf.drain(..used);
            self.buf = buf;
        }
        Ok(())
    }

    /// Has the trailer been read?
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Decodes the header (once) and the complete rows of `b` into `out`:
    /// how many bytes it used.
    fn decode(&mut self, b: &[u8], out: &mut EventRows) -> Result<usize, String> {
        let mut at = 0;
        if !self.header_read {
            let fixed = COPY_SIGNATURE.len() + 8;
            if b.len() < fixed {
                return Ok(0);
            }
            if &b[..COPY_SIGNATURE.len()] != COPY_SIGNATURE {
                return Err("not binary copy data".into());
            }
            let ext = be_u32(&b[COPY_SIGNATURE.len() + 4..fixed]) as usize;
            if b.len() < fixed + ext {
                return Ok(0);
            }
            at = fixed + ext;
            self.header_read = true;
        }
        while !self.ended {
            match row(b, at)? {
                Some((next, row)) => {
                    at = next;
                    match row {
                        Some(row) => out.push(row),
                        None => self.ended = true,
                    }
                }
                None => break,
            }
        }
        Ok(at)
    }
}

/// The row of `b` at `at`: `None` when incomplete, `Some((end, None))` for
/// the trailer.
#[allow(clippy::type_complexity)]
fn row(b: &[u8], at: usize) -> Result<Option<(usize, Option<EventData<'_>>)>, String> {
    if b.len() < at + 2 {
        return Ok(None);
    }
    let fields = i16::from_be_bytes([b[at], b[at + 1]]);
    if fields == -1 {
        return Ok(Some((at + 2, None)));
    }
    if fields != 4 {
        return Err(format!("{fields} fields in a copied event"));
    }
    let mut pos = at + 2;
    // A field: `None` when incomplete, `Some(None)` for a null.
    let field = |pos: &mut usize| -> Option<Option<&[u8]>> {
        let len = i32::from_be_bytes(b.get(*pos..*pos + 4)?.try_into().ok()?);
        *pos += 4;
        let Ok(len) = usize::try_from(len) else {
            return Some(None);
        };
        let value = b.get(*pos..*pos + len)?;
        *pos += len;
        Some(Some(value))
    };
    let (Some(seq), Some(kind), Some(v), Some(data)) = (
        field(&mut pos),
        field(&mut pos),
        field(&mut pos),
        field(&mut pos),
    ) else {
        return Ok(None);
    };
    let seq: [u8; 8] = given(seq)?
        .try_into()
        .map_err(|_| "a seq of another size")?;
    let v = match v {
        None => EVENT_VERSION as i32,
        Some(v) => i32::from_be_bytes(v.try_into().map_err(|_| "a v of another size")?),
    };
    let kind = text(given(kind)?)?;
    let data = text(given(data)?)?;
    Ok(Some((
        pos,
        Some(EventData {
            seq: i64::from_be_bytes(seq),
            kind,
            v,
            data,
        }),
    )))
}

fn text(value: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(value).map_err(|e| e.to_string())
}

/// A field that may not be null.
fn given(value: Option<&[u8]>) -> Result<&[u8], &'static str> {
    value.ok_or("a null in a copied event")
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(out: &mut Vec<u8>, value: &[u8]) {
        out.extend_from_slice(&(value.len() as i32).to_be_bytes());
        out.extend_from_slice(value);
    }

    /// What PostgreSQL sends for two events: the header, two rows (the
    /// first of format 2, the second of the current one: a null), the
    /// trailer.
    fn copy_data() -> Vec<u8> {
        let mut out = COPY_SIGNATURE.to_vec();
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        for (seq, kind, v, data) in [
            (1i64, "a", Some(2i32), "{}"),
            (2, "turn_passed", None, r#"{"seat": 1}"#),
        ] {
            out.extend_from_slice(&4i16.to_be_bytes());
            field(&mut out, &seq.to_be_bytes());
            field(&mut out, kind.as_bytes());
            match v {
                Some(v) => field(&mut out, &v.to_be_bytes()),
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
            field(&mut out, data.as_bytes());
        }
        out.extend_from_slice(&(-1i16).to_be_bytes());
        out
    }

    #[test]
    fn copy_rows_are_decoded_however_the_data_is_cut() {
        let data = copy_data();
        let expected = vec![
            EventData {
                seq: 1,
                kind: "a",
                v: 2,
                data: "{}",
            },
            EventData {
                seq: 2,
                kind: "turn_passed",
                v: EVENT_VERSION as i32,
                data: r#"{"seat": 1}"#,
            },
        ];
        for size in [1, 2, 3, 7, 19, data.len()] {
            let mut rows = CopyRows::default();
            let mut out = EventRows::default();
            for chunk in data.chunks(size) {
                rows.feed(chunk, &mut out).unwrap();
            }
            assert!(rows.ended(), "chunks of {size}");
            assert_eq!(out.iter().collect::<Vec<_>>(), expected, "chunks of {size}");
        }
    }

    #[test]
    fn a_cut_copy_has_not_ended_and_text_copy_data_is_refused() {
        let data = copy_data();
        let mut rows = CopyRows::default();
        let mut out = EventRows::default();
        rows.feed(&data[..data.len() - 2], &mut out).unwrap();
        assert!(!rows.ended());
        assert_eq!(out.len(), 2);
        let mut rows = CopyRows::default();
        assert!(rows
            .feed(b"1\ta\t{}\n-----------------", &mut EventRows::default())
            .is_err());
    }

    #[test]
    fn a_null_seq_type_or_data_is_refused() {
        let data = copy_data();
        // The first row's fields start after the header (19 bytes) and
        // its field count (2).
        let seq_length = COPY_SIGNATURE.len() + 8 + 2;
        let mut nulled = data[..seq_length].to_vec();
        nulled.extend_from_slice(&(-1i32).to_be_bytes());
        nulled.extend_from_slice(&data[seq_length + 4 + 8..]);
        let mut rows = CopyRows::default();
        let refused = rows.feed(&nulled, &mut EventRows::default()).unwrap_err();
        assert_eq!(refused, "a null in a copied event");
    }
}
