//! `huit admin create` against a real database (from DATABASE_URL, as
//! scripts/test provides).

use sqlx::Connection;

fn admin_create(url: &str, username: &str, stdin: &str) -> std::process::Output {
    crate::support::huit_with_stdin(&["admin", "create", username], Some(url), stdin)
}

#[tokio::test]
async fn admin_create_makes_an_admin_once() {
    let (url, db_options) = crate::support::scratch_database().await;

    let out = admin_create(&url, "boss", "correct horse battery\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("created admin boss"), "{stdout}");
    assert!(!stdout.contains("correct horse"));

    let mut conn = sqlx::PgConnection::connect_with(&db_options).await.unwrap();
    let (role, hash): (String, String) =
        sqlx::query_as("SELECT role, password_hash FROM accounts WHERE username = 'boss'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(role, "admin");
    assert!(api::password::verify("correct horse battery", &hash).unwrap());

    let again = admin_create(&url, "BOSS", "another password\n");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("taken"));

    let short = admin_create(&url, "boss2", "short\n");
    assert!(!short.status.success());
    assert!(!String::from_utf8_lossy(&short.stderr).contains("short"));
}
