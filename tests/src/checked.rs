//! The tests' HTTP client, which checks every JSON answer it sees against
//! the OpenAPI document (`api::openapi::document`) with a JSON Schema
//! validator: a response that does not match the schema its operation
//! declares for its status (or a status the operation does not declare)
//! fails the test that received it. Streams (SSE, NDJSON) pass unchecked;
//! so do the answers of paths the document does not list (`/openapi.json`,
//! `/docs`, an unknown path's 404).

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use jsonschema::Validator;
use reqwest::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde_json::Value;

/// A `reqwest::Client` whose answers are checked.
#[derive(Clone, Debug)]
pub struct Client(reqwest::Client);

impl Client {
    pub fn new(inner: reqwest::Client) -> Self {
        Self(inner)
    }

    pub fn get(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::POST, url)
    }

    pub fn delete(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::DELETE, url)
    }

    pub fn request(&self, method: Method, url: impl Into<String>) -> RequestBuilder {
        let url = url.into();
        RequestBuilder {
            inner: self.0.request(method.clone(), &url),
            method,
            url,
        }
    }
}

/// A request being built; [`RequestBuilder::send`] checks its answer.
#[derive(Debug)]
pub struct RequestBuilder {
    inner: reqwest::RequestBuilder,
    method: Method,
    url: String,
}

impl RequestBuilder {
    fn map(self, f: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder) -> Self {
        Self {
            inner: f(self.inner),
            ..self
        }
    }

    pub fn bearer_auth(self, token: impl Display) -> Self {
        self.map(|r| r.bearer_auth(token))
    }

    pub fn header<K, V>(self, key: K, value: V) -> Self
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        self.map(|r| r.header(key, value))
    }

    pub fn json<T: Serialize + ?Sized>(self, body: &T) -> Self {
        self.map(|r| r.json(body))
    }

    pub fn body(self, body: impl Into<reqwest::Body>) -> Self {
        self.map(|r| r.body(body))
    }

    pub fn timeout(self, timeout: Duration) -> Self {
        self.map(|r| r.timeout(timeout))
    }

    pub fn try_clone(&self) -> Option<Self> {
        Some(Self {
            inner: self.inner.try_clone()?,
            method: self.method.clone(),
            url: self.url.clone(),
        })
    }

    /// Sends the request; a JSON answer is read whole, checked, and handed
    /// back as a response with the same status, headers and body.
    pub async fn send(self) -> reqwest::Result<reqwest::Response> {
        let res = self.inner.send().await?;
        let media_type = res
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let shape = match media_type.as_str() {
            "application/json" | "application/problem+json" => Body::Whole,
            other if lines_of(&self.method, &self.url, other) => Body::Lines,
            _ => return Ok(res),
        };
        let (status, version, headers) = (res.status(), res.version(), res.headers().clone());
        let body = res.bytes().await?;
        check(&self.method, &self.url, (status, &media_type, shape), &body);
        let mut rebuilt = http::Response::builder().status(status).version(version);
        *rebuilt.headers_mut().expect("a builder") = headers;
        Ok(reqwest::Response::from(
            rebuilt.body(body).expect("the same parts"),
        ))
    }
}

/// The document as JSON, once.
static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
    serde_json::to_value(api::openapi::document()).expect("the document serialises")
});

/// Validators by the JSON pointer of their schema in the document.
static VALIDATORS: LazyLock<Mutex<HashMap<String, Arc<Validator>>>> = LazyLock::new(Mutex::default);

/// The path of `url`, without its scheme, host and query.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    path.split(['?', '#']).next().unwrap_or(path)
}

/// The document's path template that `path` matches (`{x}` matches one
/// segment).
fn template_of(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.split('/').collect();
    DOCUMENT["paths"].as_object()?.keys().find_map(|template| {
        let parts: Vec<&str> = template.split('/').collect();
        (parts.len() == segments.len()
            && parts
                .iter()
                .zip(&segments)
                .all(|(t, s)| t == s || (t.starts_with('{') && t.ends_with('}') && !s.is_empty())))
        .then_some(template.as_str())
    })
}

/// One token of a JSON pointer, escaped, as it stands in a URI fragment.
fn escape(token: &str) -> String {
    token
        .replace('~', "~0")
        .replace('/', "~1")
        .replace('{', "%7B")
        .replace('}', "%7D")
}

/// Whether the document says that `method url` answers `media_type` as
/// lines of JSON (an `x-itemSchema`, as `GET …/log` does).
fn lines_of(method: &Method, url: &str, media_type: &str) -> bool {
    let Some(template) = template_of(path_of(url)) else {
        return false;
    };
    let operation = &DOCUMENT["paths"][template][method.as_str().to_ascii_lowercase()];
    operation["responses"]
        .as_object()
        .into_iter()
        .flat_map(|responses| responses.values())
        .any(|answer| !answer["content"][media_type]["x-itemSchema"].is_null())
}

/// How an answer's body holds its JSON.
#[derive(Clone, Copy, Debug)]
enum Body {
    /// One document, checked against the media type's `schema`.
    Whole,
    /// One document per line (NDJSON), each checked against the media
    /// type's `x-itemSchema`.
    Lines,
}

/// Panics, naming the request, when `body` does not match what the document
/// says of `method url` answering `status` with `media_type`.
fn check(method: &Method, url: &str, answer: (StatusCode, &str, Body), body: &[u8]) {
    let (status, media_type, shape) = answer;
    let path = path_of(url);
    let Some(template) = template_of(path) else {
        return;
    };
    let request = format!("{method} {path} → {status}");
    let operation = &DOCUMENT["paths"][template][method.as_str().to_ascii_lowercase()];
    if operation.is_null() {
        return;
    }
    let code = status.as_u16().to_string();
    let Some(content) = operation["responses"][&code]["content"].as_object() else {
        panic!("{request}: the document declares no {media_type} body for this status");
    };
    assert!(
        content.contains_key(media_type),
        "{request}: answered {media_type}, the document declares {:?}",
        content.keys().collect::<Vec<_>>()
    );
    let (key, documents) = match shape {
        Body::Whole => ("schema", vec![body]),
        Body::Lines => (
            "x-itemSchema",
            body.split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .collect(),
        ),
    };
    let pointer = format!(
        "#/paths/{}/{}/responses/{code}/content/{}/{key}",
        escape(template),
        method.as_str().to_ascii_lowercase(),
        escape(media_type)
    );
    let validator = validator(&pointer);
    for document in documents {
        let instance: Value = serde_json::from_slice(document)
            .unwrap_or_else(|e| panic!("{request}: the body is not JSON ({e})"));
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .take(5)
            .map(|e| format!("{e} (at {})", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{request}: the answer does not match its schema {pointer}:\n- {}\n{instance:#}",
            errors.join("\n- ")
        );
    }
}

/// The validator of the schema at `pointer`, compiled once: the whole
/// document with a `$ref` to it, so that its references resolve.
fn validator(pointer: &str) -> Arc<Validator> {
    let mut validators = VALIDATORS.lock().unwrap_or_else(|p| p.into_inner());
    validators
        .entry(pointer.to_owned())
        .or_insert_with(|| {
            let mut root = DOCUMENT.clone();
            root["$ref"] = Value::String(pointer.to_owned());
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&root)
                .unwrap_or_else(|e| panic!("the schema at {pointer} compiles: {e}"));
            Arc::new(validator)
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_its_template() {
        assert_eq!(
            path_of("http://127.0.0.1:8/v1/tables?mine=true"),
            "/v1/tables"
        );
        let path =
            path_of("http://127.0.0.1:8/v1/tables/6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11/view");
        assert_eq!(template_of(path), Some("/v1/tables/{id}/view"));
        assert_eq!(template_of("/nowhere"), None);
    }

    #[test]
    #[should_panic(expected = "does not match its schema")]
    fn an_answer_that_breaks_its_schema_fails() {
        let body = br#"{"status": "playing"}"#;
        check(
            &Method::GET,
            "http://127.0.0.1:8/v1/tables/6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11/view",
            (StatusCode::OK, "application/json", Body::Whole),
            body,
        );
    }

    #[test]
    #[should_panic(expected = "declares no")]
    fn a_status_the_document_does_not_declare_fails() {
        check(
            &Method::GET,
            "http://127.0.0.1:8/v1/me",
            (StatusCode::IM_A_TEAPOT, "application/json", Body::Whole),
            b"{}",
        );
    }

    #[test]
    fn a_problem_that_matches_passes() {
        let body = br#"{"type": "about:blank", "title": "Unauthorized", "status": 401, "detail": "no token", "code": "unauthorized"}"#;
        check(
            &Method::GET,
            "http://127.0.0.1:8/v1/me",
            (
                StatusCode::UNAUTHORIZED,
                "application/problem+json",
                Body::Whole,
            ),
            body,
        );
    }

    const LOG: &str = "http://127.0.0.1:8/v1/tables/6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11/log";

    #[test]
    #[should_panic(expected = "does not match its schema")]
    fn a_log_line_that_breaks_the_item_schema_fails() {
        assert!(lines_of(&Method::GET, LOG, "application/x-ndjson"));
        let body = b"{\"seq\": 1, \"type\": \"card_played\"}\n";
        let answer = (StatusCode::OK, "application/x-ndjson", Body::Lines);
        check(&Method::GET, LOG, answer, body);
    }

    #[test]
    fn the_documented_log_lines_pass_as_ndjson_and_as_text() {
        for media_type in ["application/x-ndjson", "text/plain"] {
            assert!(lines_of(&Method::GET, LOG, media_type));
            let content = &DOCUMENT["paths"]["/v1/tables/{id}/log"]["get"]["responses"]["200"]
                ["content"][media_type];
            let lines = content["schema"]["examples"][0]
                .as_str()
                .expect("an example");
            let answer = (StatusCode::OK, media_type, Body::Lines);
            check(&Method::GET, LOG, answer, lines.as_bytes());
        }
    }
}
