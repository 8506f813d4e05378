//! The stable machine codes of every refusal: the words clients switch on,
//! named once, beneath both the services that refuse (their
//! [`crate::service_error::ServiceError`]s carry a code) and the HTTP layer
//! that answers them ([`crate::error`]).

use serde::Serialize;
use utoipa::ToSchema;

/// Every `code` a problem may carry: clients switch on these.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    ToSchema,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[schema(example = "version_conflict")]
pub enum ProblemCode {
    MalformedJson,
    InvalidBody,
    InvalidQuery,
    UnsupportedMediaType,
    PayloadTooLarge,
    Unauthorized,
    InvalidCredentials,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    UsernameTaken,
    VersionConflict,
    IdempotencyKeyReused,
    ServiceUnavailable,
    InternalError,
    TooManyStreams,
    StepOutOfRange,
    IdempotencyKeyInUse,
    CorsRefused,
    TooManyRequests,
    InvalidHeader,
    InvalidMove,
    NotAPlayer,
    RoundRunning,
    GameRunning,
    InvalidLastEventId,
    InvalidUsername,
    InvalidPassword,
    TableFull,
    AlreadySeated,
    NotSeated,
    NotCreator,
    NotEnoughPlayers,
    TableNotWaiting,
    NotAway,
    SeatAway,
    AlreadyResigned,
    AbortTooLate,
    GameAborted,
    InvalidClock,
    InvalidBot,
    NoAutomaticMove,
    InvalidRules,
    GameNotStarted,
    GameAlreadyStarted,
    GameOver,
    NoSuchSeat,
    NotYourTurn,
    CardNotInHand,
    IllegalMove,
    BadChoice,
    BadAnnounce,
    CannotDraw,
    CannotPass,
    CannotChallenge,
    BadDeck,
    InvalidDispute,
    InvalidCorrection,
    AlreadyResolved,
    InvalidSanction,
    AlreadyLifted,
    AccountSuspended,
    InvalidDevice,
    TooManyDevices,
    NoPersonSeated,
    TooManyBots,
    InvitationNeeded,
    SeatReserved,
    StartsByItself,
    GameNotOver,
    RematchOpen,
    InvitationNotFound,
    NotPrivate,
    QuickplayTableOpen,
    TableClosed,
    DeliveryPending,
    WebhooksOff,
    WrongPassword,
    NotAGuest,
}

impl ProblemCode {
    /// The code as sent: the variant's name in snake_case, the same rule
    /// serde's `rename_all` applies (one list of names, the enum's).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
