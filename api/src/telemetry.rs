//! Logging: `tracing` to stderr, filtered by `RUST_LOG`.

use std::io::IsTerminal;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::Error;
use tracing::{field, Level, Span};
use tracing_actix_web::{root_span, DefaultRootSpanBuilder, RootSpanBuilder};
use tracing_subscriber::EnvFilter;
use uuid::Uuid;

/// The filter used when `RUST_LOG` is unset.
pub const DEFAULT_FILTER: &str = "info,sqlx=warn";

/// Installs the global subscriber (once; later calls do nothing).
pub fn init() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// The span of each request, as tracing-actix-web's
/// [`DefaultRootSpanBuilder`] makes it, with two fields more that the
/// extractors fill in once ([`record_account`], [`record_table`]) so that
/// every line a request logs says who asked and about which table, but
/// only when it is enabled: the
/// default reads the connection's info and the user agent before `tracing`
/// checks the span's level, a few per cent of the server's CPU under load
/// at `RUST_LOG=warn` (BENCHMARKS.md, sixth pass), for a span nobody sees.
#[derive(Debug)]
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        if tracing::enabled!(Level::INFO) {
            root_span!(
                level = Level::INFO,
                request,
                account_id = field::Empty,
                table_id = field::Empty
            )
        } else {
            Span::none()
        }
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// Names the caller in the request's span (the authentication extractors
/// call it).
pub fn record_account(id: Uuid) {
    Span::current().record("account_id", field::display(id));
}

/// Names the table of the path in the request's span.
pub fn record_table(id: Uuid) {
    Span::current().record("table_id", field::display(id));
}

#[cfg(test)]
pub(crate) mod tests {
    use actix_web::dev::ConnectionInfo;
    use actix_web::{
        test, web, App, FromRequest, Handler, HttpMessage, HttpRequest, HttpResponse, Responder,
    };
    use tracing::level_filters::LevelFilter;
    use tracing_actix_web::TracingLogger;

    use super::*;

    /// A `Write` into a buffer the test keeps.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Serves one `GET uri` with `handler` at `route`, in the request span,
    /// under a subscriber that logs up to `max_level`: the answer's body
    /// and what was logged.
    pub(crate) async fn serve_once<F, Args>(
        max_level: LevelFilter,
        route: &str,
        uri: &str,
        handler: F,
    ) -> (String, String)
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(max_level)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let app = test::init_service(
            App::new()
                .route(route, web::get().to(handler))
                .wrap(TracingLogger::<RequestSpan>::new()),
        )
        .await;
        let request = test::TestRequest::get().uri(uri).to_request();
        let body = test::call_and_read_body(&app, request).await;
        let logged = captured.0.lock().unwrap().clone();
        (
            String::from_utf8(body.to_vec()).unwrap(),
            String::from_utf8(logged).unwrap(),
        )
    }

    /// The name of the span a request is served in ("" when there is
    /// none) and whether its connection info was read, as `name|read`,
    /// under a subscriber that logs up to `max_level`.
    async fn request_span_under(max_level: LevelFilter) -> String {
        let handler = |request: HttpRequest| async move {
            let name = Span::current().metadata().map_or("", |m| m.name());
            // actix-web keeps the connection info in the request's
            // extensions once it is read.
            let read = request.extensions().contains::<ConnectionInfo>();
            HttpResponse::Ok().body(format!("{name}|{read}"))
        };
        serve_once(max_level, "/", "/", handler).await.0
    }

    #[actix_web::test]
    async fn a_request_is_served_in_the_default_span_when_info_is_logged() {
        assert_eq!(
            request_span_under(LevelFilter::INFO).await,
            "HTTP request|true"
        );
    }

    #[actix_web::test]
    async fn no_request_span_is_built_when_info_is_not_logged() {
        assert_eq!(request_span_under(LevelFilter::WARN).await, "|false");
    }
}
