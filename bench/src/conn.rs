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

type Error = Box<dyn std::error::Error + Send + Sync>;

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
        let sender = match &mut self.sender {
            Some(sender) if !sender.is_closed() => sender,
            _ => self.sender.insert(connect(&self.server).await?),
        };
        sender.ready().await?;
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
