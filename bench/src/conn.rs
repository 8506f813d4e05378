//! One client's keep-alive HTTP/1.1 connection, on hyper's connection API:
//! the requests of the measured loops (moves, long polls of the view, the
//! baseline's inserts). reqwest, which the set-up and the streams still use,
//! parses every request's URL again in its redirect layer (it cannot be
//! turned off), and checks a connection out of a shared pool: for a client
//! that sends one request at a time to one server, that was most of
//! loadgen's own CPU per request beside the kernel's, and the games send 4
//! requests per move where the baseline sends 1 per row.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST, IF_NONE_MATCH};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::Error;

/// Where a client's connection goes: the server's address and `Host`.
#[derive(Debug, Clone)]
pub struct Server {
    addr: SocketAddr,
    host: HeaderValue,
}

impl Server {
    /// The server of `base_url` (`http://host:port`, an IP address or a
    /// name resolved once).
    pub async fn of(base_url: &str) -> Result<Self, Error> {
        let url = reqwest::Url::parse(base_url)?;
        if url.scheme() != "http" {
            return Err(format!("{base_url}: only http:// is measured").into());
        }
        let host = url.host_str().ok_or("a base URL without a host")?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addr = tokio::net::lookup_host((host, port))
            .await?
            .next()
            .ok_or_else(|| format!("{host}: no address"))?;
        Ok(Self {
            addr,
            host: HeaderValue::from_str(&format!("{host}:{port}"))?,
        })
    }
}

/// An answer: its status and its whole body.
pub type Answer = (StatusCode, Bytes);

/// One connection, opened on first use and again after a failure.
#[derive(Debug)]
pub struct Conn {
    server: Server,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    pub fn new(server: Server) -> Self {
        Self {
            server,
            sender: None,
        }
    }

    /// `GET path` (origin form: `/v1/…?…`).
    pub async fn get(
        &mut self,
        path: &Uri,
        auth: Option<&HeaderValue>,
        if_none_match: Option<HeaderValue>,
    ) -> Result<Answer, Error> {
        let mut req = self.request(Method::GET, path, auth, Bytes::new());
        if let Some(etag) = if_none_match {
            req.headers_mut().insert(IF_NONE_MATCH, etag);
        }
        self.send(req).await
    }

    /// `POST path` with a JSON body.
    pub async fn post_json(
        &mut self,
        path: &Uri,
        auth: Option<&HeaderValue>,
        json: Vec<u8>,
    ) -> Result<Answer, Error> {
        let mut req = self.request(Method::POST, path, auth, Bytes::from(json));
        req.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.send(req).await
    }

    fn request(
        &self,
        method: Method,
        path: &Uri,
        auth: Option<&HeaderValue>,
        body: Bytes,
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = path.clone();
        let headers = req.headers_mut();
        headers.insert(HOST, self.server.host.clone());
        if let Some(auth) = auth {
            headers.insert(AUTHORIZATION, auth.clone());
        }
        req
    }

    async fn send(&mut self, req: Request<Full<Bytes>>) -> Result<Answer, Error> {
        let answer = self.exchange(req).await;
        if answer.is_err() {
            // Whatever state the connection is in, the next request gets a
            // new one.
            self.sender = None;
        }
        answer
    }

    async fn exchange(&mut self, req: Request<Full<Bytes>>) -> Result<Answer, Error> {
        let mut sender = match self.sender.take() {
            Some(sender) if !sender.is_closed() => sender,
            _ => connect(&self.server).await?,
        };
        if sender.ready().await.is_err() {
            // Closed by the server meanwhile (its keep-alive ran out, say):
            // the request was not sent, so it goes on a new connection.
            sender = connect(&self.server).await?;
            sender.ready().await?;
        }
        let sender = self.sender.insert(sender);
        let res = sender.send_request(req).await?;
        let status = res.status();
        let body = res.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }
}

/// A new connection; its I/O runs on a task of its own until either side
/// closes it.
async fn connect(server: &Server) -> Result<SendRequest<Full<Bytes>>, Error> {
    let stream = TcpStream::connect(server.addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// `Bearer <token>`.
pub fn bearer(token: &str) -> Result<HeaderValue, Error> {
    Ok(HeaderValue::from_str(&format!("Bearer {token}"))?)
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A server that answers every request `200 ok`, closes each connection
    /// after its first answer when `close` is set, and hands over what it
    /// read of each request.
    async fn server(close: bool) -> (Server, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (heads, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let heads = heads.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    loop {
                        let n = socket.read(&mut buf).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        let _ = heads.send(String::from_utf8_lossy(&buf[..n]).into_owned());
                        let connection = if close { "close" } else { "keep-alive" };
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: {connection}\r\n\r\nok"
                        );
                        socket.write_all(answer.as_bytes()).await.unwrap();
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        let server = Server::of(&format!("http://{addr}")).await.unwrap();
        (server, rx)
    }

    #[tokio::test]
    async fn requests_carry_host_authorization_and_the_etag_on_one_connection() {
        let (server, mut heads) = server(false).await;
        let mut conn = Conn::new(server.clone());
        let auth = bearer("t0ken").unwrap();
        let path = Uri::from_static("/v1/tables/x/view?wait=5");
        let etag = HeaderValue::from_static("\"7\"");
        let (status, body) = conn.get(&path, Some(&auth), Some(etag)).await.unwrap();
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"ok"[..]));
        let head = heads.recv().await.unwrap().to_lowercase();
        assert!(
            head.starts_with("get /v1/tables/x/view?wait=5 http/1.1\r\n"),
            "{head}"
        );
        assert!(
            head.contains(&format!("host: {}\r\n", server.host.to_str().unwrap())),
            "{head}"
        );
        assert!(head.contains("authorization: bearer t0ken\r\n"), "{head}");
        assert!(head.contains("if-none-match: \"7\"\r\n"), "{head}");

        conn.post_json(&Uri::from_static("/baseline"), None, b"{}".to_vec())
            .await
            .unwrap();
        let head = heads.recv().await.unwrap().to_lowercase();
        assert!(head.starts_with("post /baseline http/1.1\r\n"), "{head}");
        assert!(
            head.contains("content-type: application/json\r\n"),
            "{head}"
        );
        assert!(head.ends_with("\r\n\r\n{}"), "{head}");
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_opened_again() {
        let (server, _heads) = server(true).await;
        let mut conn = Conn::new(server);
        let path = Uri::from_static("/healthz");
        for _ in 0..3 {
            let (status, _) = conn.get(&path, None, None).await.unwrap();
            assert_eq!(status, StatusCode::OK);
        }
    }
}
