//! The OpenAPI document, collected from the router ([`crate::routes::configure`])
//! so it cannot drift from it. `openapi/openapi.json` is this document,
//! regenerated with `cargo run -p api --bin huit -- openapi > openapi/openapi.json`.

use actix_web::App;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::schema::{ArrayItems, Schema};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{Components, Ref, RefOr, Required};
use utoipa::{Modify, OpenApi, PartialSchema, ToSchema};
use utoipa_actix_web::AppExt;

use crate::error::Problem;
use crate::routes::tables::dto::{SeatRequest, ViewPlayer};
use store::StoredEvent;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Huit API",
        description = "HTTP API of Huit, a server for 8 américain (Crazy Eights). \
Errors are RFC 9457 `application/problem+json` documents with a stable `code`."
    ),
    modifiers(&BearerAuth),
    components(schemas(Problem, StoredEvent)),
    tags(
        (name = "health", description = "Service health"),
        (name = "accounts", description = "Registration and the caller's account"),
        (name = "sessions", description = "Log-in and log-out (bearer tokens)"),
        (name = "history", description = "Round history, replays, the log export and the event stream"),
        (name = "admin", description = "Administration: audits"),
        (name = "tables", description = "Rule sets, tables, views, moves and the event feed"),
        (name = "players", description = "Players' statistics and ratings, and the leaderboards (public)"),
    )
)]
#[derive(Debug)]
pub struct ApiDoc;

/// The bearer scheme ([`secure_by_default`] puts it on the routes).
#[derive(Debug)]
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// What the collected document needs besides the routes' own: bearer
/// security by default (`secure_by_default`) and the unions as generators
/// read them (`domain::schema::union_components`, in place of the derived
/// ones).
pub fn finish(openapi: &mut utoipa::openapi::OpenApi) {
    secure_by_default(openapi);
    seat_requests_may_be_left_out(openapi);
    let components = openapi.components.get_or_insert_with(Default::default);
    components
        .schemas
        .extend(domain::schema::union_components());
    view_players_by_reference(components);
}

/// The view's players as references to `ViewPlayer`: utoipa inlines a
/// generic's argument (`SeatView<ViewPlayer>`), here an `allOf` of three
/// components, which generators can neither name nor build ("allOf
/// schema `null` containing multiple types").
fn view_players_by_reference(components: &mut Components) {
    let name = ViewPlayer::name();
    let Some(RefOr::T(Schema::Object(view))) = components.schemas.get_mut("SeatView_ViewPlayer")
    else {
        unreachable!("the view is a component")
    };
    let Some(RefOr::T(Schema::Array(players))) = view.properties.get_mut("players") else {
        unreachable!("the view's players are an array")
    };
    players.items = ArrayItems::RefOrSchema(Box::new(Ref::from_schema_name(name.clone()).into()));
    components
        .schemas
        .insert(name.into_owned(), ViewPlayer::schema());
}

/// Every route takes a bearer token unless its `#[utoipa::path]` says
/// `security(())`: the safe default is written once, and the few public
/// routes (sign-up, log-in, rule sets, health) say that they are. (Run on
/// the collected document: the routes' paths are added after the derive's
/// modifiers.)
fn secure_by_default(openapi: &mut utoipa::openapi::OpenApi) {
    let public = vec![SecurityRequirement::default()];
    let bearer = vec![SecurityRequirement::new("bearer", Vec::<String>::new())];
    for item in openapi.paths.paths.values_mut() {
        for operation in operations(item) {
            operation.security = match operation.security.take() {
                None => Some(bearer.clone()),
                Some(declared) if declared == public => None,
                Some(declared) => Some(declared),
            };
        }
    }
}

/// A `SeatRequest` body (joining, an invitation, a rematch) may be left
/// out (`crate::routes::shared::OptionalBody`): not `required`, which
/// utoipa writes for a body that is not an `Option`, and the generators
/// read a plain reference better than the union with null an `Option`
/// makes (openapi-python-client 0.29 sends its "unset" marker as JSON).
fn seat_requests_may_be_left_out(openapi: &mut utoipa::openapi::OpenApi) {
    let seat_request = RefOr::Ref(Ref::from_schema_name(SeatRequest::name()));
    for item in openapi.paths.paths.values_mut() {
        for operation in operations(item) {
            let Some(body) = operation.request_body.as_mut() else {
                continue;
            };
            let takes_a_seat = body
                .content
                .values()
                .any(|c| c.schema.as_ref() == Some(&seat_request));
            if takes_a_seat {
                body.required = Some(Required::False);
            }
        }
    }
}

/// The operations of one path.
fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

/// The whole document.
pub fn document() -> utoipa::openapi::OpenApi {
    let (_, mut doc) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .configure(crate::routes::configure)
        .split_for_parts();
    finish(&mut doc);
    doc
}

/// The document as committed: pretty JSON and a final newline.
pub fn document_json() -> String {
    let mut json = document()
        .to_pretty_json()
        .expect("the OpenAPI document serializes");
    json.push('\n');
    json
}
