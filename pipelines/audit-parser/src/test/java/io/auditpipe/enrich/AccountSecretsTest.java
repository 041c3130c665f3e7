package io.auditpipe.enrich;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The secrets of account statements are masked, their statements' structure kept
 * (docs/compliance.md).
 */
class AccountSecretsTest {
    private final SensitiveDataMasker masker = new SensitiveDataMasker(true, Map.of());

    private String masked(String text) {
        return masker.mask(text).text();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "CREATE USER 'bob'@'%' IDENTIFIED BY 'S3cret!'|CREATE USER 'bob'@'%' IDENTIFIED BY '*******'",
                "create user bob identified with caching_sha2_password by 'pw'|create user bob identified with caching_sha2_password by '**'",
                "ALTER USER 'bob'@'localhost' IDENTIFIED WITH mysql_native_password AS '*2470C0C06DEE'|ALTER USER 'bob'@'localhost' IDENTIFIED WITH mysql_native_password AS '*************'",
                "GRANT ALL ON *.* TO 'm'@'%' IDENTIFIED BY \"hunter2\"|GRANT ALL ON *.* TO 'm'@'%' IDENTIFIED BY \"*******\"",
                "SET PASSWORD FOR 'bob'@'%' = 'n3w'|SET PASSWORD FOR 'bob'@'%' = '***'",
                "SET PASSWORD = PASSWORD('old-style')|SET PASSWORD = PASSWORD('*********')",
                "CREATE USER x IDENTIFIED VIA ed25519 USING PASSWORD('pw')|CREATE USER x IDENTIFIED VIA ed25519 USING PASSWORD('**')",
                "CHANGE MASTER TO MASTER_USER='repl', MASTER_PASSWORD='r3pl'|CHANGE MASTER TO MASTER_USER='repl', MASTER_PASSWORD='****'",
                "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD 'x1')|CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD '**')",
                "CREATE USER a IDENTIFIED BY 'it''s', b IDENTIFIED BY 'q\\'x'|CREATE USER a IDENTIFIED BY '*****', b IDENTIFIED BY '****'",
                "ALTER USER u IDENTIFIED BY 'never closed|ALTER USER u IDENTIFIED BY '************",
                "alter user u IdEnTiFiEd By 'Mx'|alter user u IdEnTiFiEd By '**'",
                "set pAsSwOrD = 'Mx2'|set pAsSwOrD = '***'",
                "SET PASSWORD='ab'|SET PASSWORD='**'",
            })
    void eachFormsSecretIsMaskedAndTheStatementKept(String statement, String expected) {
        SensitiveDataMasker.Masked m = masker.mask(statement);
        assertEquals(expected, m.text());
        assertEquals(List.of(SensitiveDataMasker.CREDENTIALS), m.found());
        assertEquals(statement.length(), m.text().length());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "SELECT password FROM mysql.user WHERE user = 'bob'",
                "ALTER USER 'bob'@'%' PASSWORD EXPIRE INTERVAL 90 DAY",
                "CREATE USER 'a'@'h' IDENTIFIED WITH auth_socket, 'b'@'h'",
                "SELECT password_hash, name FROM app.users WHERE name = 'x'",
                "SELECT 'identified', 1",
                "UPDATE t SET passwords = 'not a keyword'",
                "20261126 06:33:40,vm,root,localhost,4,4,QUERY,mysql,'CREATE USER sbtest@\\'%\\' IDENTIFIED BY *****',0",
            })
    void statementsWithoutASecretAreLeftAlone(String statement) {
        SensitiveDataMasker.Masked m = masker.mask(statement);
        assertEquals(statement, m.text());
        assertEquals(List.of(), m.found());
    }

    @Test
    void theRecordsOwnEncodingsOfTheLiteralAreFoundToo() {
        // a JSON record line (original), an XML record, a CSV field
        assertEquals(
                "{\"sqltext\":\"CREATE USER u IDENTIFIED BY \\\"**\\\"\",\"user\":\"root\"}",
                masked(
                        "{\"sqltext\":\"CREATE USER u IDENTIFIED BY \\\"pw\\\"\",\"user\":\"root\"}"));
        assertEquals(
                "<SQLTEXT>CREATE USER u IDENTIFIED BY &apos;**&apos;</SQLTEXT>",
                masked("<SQLTEXT>CREATE USER u IDENTIFIED BY &apos;pw&apos;</SQLTEXT>"));
        assertEquals(
                "SQLTEXT=\"SET PASSWORD = &quot;**&quot;\"",
                masked("SQLTEXT=\"SET PASSWORD = &quot;pw&quot;\""));
        assertEquals(
                "1,\"ALTER USER u IDENTIFIED BY \"\"**\"\"\",x",
                masked("1,\"ALTER USER u IDENTIFIED BY \"\"pw\"\"\",x"));
        // the bytes of a dead letter, through their ISO-8859-1 view
        assertEquals(
                "IDENTIFIED BY '***'",
                new String(
                        masker.mask(
                                "IDENTIFIED BY 'p\u00e9w'"
                                        .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)),
                        java.nio.charset.StandardCharsets.ISO_8859_1));
    }

    @Test
    void aBase64StatementIsMaskedWholeInTheRecordWhenItsDecodedTextHoldsASecret() {
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder();
        String secret =
                b64.encodeToString("INSERT INTO cards VALUES ('4111 1111 1111 1111')".getBytes());
        String record =
                "<AUDIT_RECORD><SQLTEXT encode=\"base64\">"
                        + secret
                        + "</SQLTEXT><USER>app</USER></AUDIT_RECORD>";
        SensitiveDataMasker.Masked m = masker.mask(record);
        assertEquals(record.replace(secret, "*".repeat(secret.length())), m.text());
        assertEquals(List.of(SensitiveDataMasker.PAN), m.found());
        String password = b64.encodeToString("CREATE USER u IDENTIFIED BY 'pw'".getBytes());
        assertEquals(
                List.of(SensitiveDataMasker.CREDENTIALS),
                masker.mask("<SQLTEXT encode='base64'>" + password + "</SQLTEXT>").found());
        String innocuous =
                "<SQLTEXT encode=\"base64\">"
                        + b64.encodeToString("SELECT 1".getBytes())
                        + "</SQLTEXT>";
        assertEquals(innocuous, masker.mask(innocuous).text());
    }

    @Test
    void whateverTheTextHoldsTheScanIsBoundedAndAnEmptyLiteralHidesNothing() {
        String many =
                "password 'x".repeat(200_000) + "password 'y"; // the last literal never closes
        SensitiveDataMasker.Masked m =
                org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                        java.time.Duration.ofSeconds(5), () -> masker.mask(many));
        assertEquals(many.length(), m.text().length());
        // quotes pair up as they come: each literal between two of them masked, the unclosed last
        // one to the end
        assertTrue(
                m.text().startsWith("password '**********'xpassword '**********'x")
                        && m.text().endsWith("'*"),
                () -> m.text().substring(0, 100));
        assertEquals(List.of(SensitiveDataMasker.CREDENTIALS), m.found());
        String keywords = "identified ".repeat(300_000) + "by 'pw'";
        assertEquals(
                keywords.replace("'pw'", "'**'"),
                org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                                java.time.Duration.ofSeconds(5), () -> masker.mask(keywords))
                        .text());
        assertEquals(
                "password 'a password 'b".replace("a password ", "*".repeat(11)),
                masked("password 'a password 'b"));
        assertEquals("CREATE USER u IDENTIFIED BY ''", masked("CREATE USER u IDENTIFIED BY ''"));
    }

    @Test
    void turnedOffItMasksNoSecret() {
        String statement = "CREATE USER 'bob'@'%' IDENTIFIED BY 'S3cret!'";
        assertEquals(
                statement, new SensitiveDataMasker(true, false, Map.of()).mask(statement).text());
        assertEquals(
                statement,
                ComplianceSettings.fromProperties(Map.of("compliance.masking.credentials", "false"))
                        .masker()
                        .mask(statement)
                        .text());
    }
}
