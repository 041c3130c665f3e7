package io.auditpipe.parser;

import static io.auditpipe.parser.PerconaLines.DB01;
import static io.auditpipe.parser.PerconaLines.T0;
import static io.auditpipe.parser.PerconaLines.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PerconaJsonParserTest {
    private final PerconaJsonParser parser = new PerconaJsonParser();

    private AuditEvent ok(byte[] line) {
        ParseResult r = parser.parse(line, DB01);
        assertTrue(r.isOk(), () -> "expected a parsed event, got " + r);
        return r.event();
    }

    private String failure(byte[] line) {
        ParseResult r = parser.parse(line, DB01);
        assertFalse(r.isOk(), () -> "expected a failure, got " + r);
        return r.failureReason();
    }

    @Test
    void queryEventIsNormalized() {
        AuditEvent e =
                ok(PerconaLines.query("select", "SELECT * FROM orders WHERE id = 7", 0).bytes());
        assertEquals("db-01/3_2026-11-22T09:00:00", e.id);
        assertEquals("db-01", e.server);
        assertEquals("percona-json", e.format);
        assertEquals("/var/lib/mysql/audit.log", e.sourceFile);
        assertEquals("rsyslog", e.collector);
        assertEquals("Query", e.eventName);
        assertEquals("select", e.commandClass);
        assertEquals(12L, e.connectionId);
        assertEquals(0, e.status);
        assertEquals(T0.toEpochMilli(), e.eventTimeMillis);
        assertEquals("SELECT * FROM orders WHERE id = 7", e.sqltext);
        assertEquals("shop", e.db);
        assertNull(e.authOutcome, "a query is not a login");
    }

    @Test
    void accountStringOfQueryEventsIsSplit() {
        AuditEvent e = ok(PerconaLines.query("select", "SELECT 1", 0).with("ip", "").bytes());
        assertEquals("app", e.user);
        assertEquals("app[app] @ app-1 [10.0.0.5]", e.userRaw);
        assertEquals("app", e.privUser);
        assertEquals("app-1", e.host);
        assertEquals("10.0.0.5", e.ip, "an empty ip is filled from the account string");
    }

    @Test
    void successfulConnectIsASuccessfulLogin() {
        AuditEvent e = ok(PerconaLines.connect("app", 0).bytes());
        assertEquals("Connect", e.eventName);
        assertEquals(AuditEvent.AUTH_SUCCESS, e.authOutcome);
        assertFalse(e.isFailedLogin());
        assertEquals("app", e.user);
        assertNull(e.userRaw, "a plain user name is kept as it is");
        assertEquals("", e.osLogin);
        assertEquals("", e.proxyUser);
    }

    @Test
    void connectWithNonZeroStatusIsAFailedLogin() {
        AuditEvent e = ok(PerconaLines.connect("mallory", 1045).bytes());
        assertEquals(1045, e.status);
        assertEquals(AuditEvent.AUTH_FAILURE, e.authOutcome);
        assertTrue(e.isFailedLogin());
    }

    @Test
    void changeUserIsALoginEventToo() {
        assertEquals(
                AuditEvent.AUTH_FAILURE,
                ok(PerconaLines.changeUser("bob", 1045).bytes()).authOutcome);
        assertEquals(
                AuditEvent.AUTH_SUCCESS, ok(PerconaLines.changeUser("bob", 0).bytes()).authOutcome);
    }

    @Test
    void quitIsNotALogin() {
        AuditEvent e = ok(PerconaLines.quit("app").bytes());
        assertEquals("Quit", e.eventName);
        assertNull(e.authOutcome);
    }

    @Test
    void auditAndNoAuditKeepServerDetailsAsExtra() {
        AuditEvent start = ok(PerconaLines.audit().bytes());
        assertEquals("Audit", start.eventName);
        assertEquals("8.0.36-28", start.extra.get("mysql_version"));
        assertEquals("--port=3306", start.extra.get("startup_optionsi"));
        assertNull(start.connectionId);
        AuditEvent stop = ok(PerconaLines.noAudit().bytes());
        assertEquals("NoAudit", stop.eventName);
        assertTrue(stop.extra.isEmpty());
    }

    @Test
    void otherCommandEventsParse() {
        assertEquals(
                "Execute",
                ok(PerconaLines.query("select", "SELECT ?", 0).with("name", "Execute").bytes())
                        .eventName);
        assertEquals(
                "Init DB",
                ok(PerconaLines.query("change_db", "", 0).with("name", "Init DB").bytes())
                        .eventName);
    }

    @Test
    void bothPerconaTimestampShapesAreUtc() {
        long a =
                ok(PerconaLines.connect("a", 0)
                                .with("timestamp", PerconaLines.T0_PERCONA_57)
                                .bytes())
                        .eventTimeMillis;
        long b =
                ok(PerconaLines.connect("a", 0)
                                .with("timestamp", PerconaLines.T0_PERCONA_80)
                                .bytes())
                        .eventTimeMillis;
        assertEquals(T0.toEpochMilli(), a);
        assertEquals(T0.toEpochMilli(), b);
    }

    @Test
    void numericConnectionIdAndStringStatusAreAccepted() {
        byte[] line =
                utf8(
                        "{\"audit_record\":{\"name\":\"Query\",\"record\":\"9_x\",\"timestamp\":\"2026-11-22T10:15:30Z\","
                                + "\"connection_id\":42,\"status\":\"1064\"}}");
        AuditEvent e = ok(line);
        assertEquals(42L, e.connectionId);
        assertEquals(1064, e.status);
    }

    @Test
    void escapedQuotesNewlinesAndUnicodeInSqltextSurvive() {
        String sql =
                "INSERT INTO t VALUES ('it''s', \"q\\\"x\", 'line1\nline2\ttab', 'Grüße 日本 🎉')";
        AuditEvent e = ok(PerconaLines.query("insert", sql, 0).bytes());
        assertEquals(sql, e.sqltext);
    }

    @Test
    void unicodeEscapesAreDecoded() {
        byte[] line =
                utf8(
                        "{\"audit_record\":{\"name\":\"Query\",\"record\":\"1_x\",\"timestamp\":\"2026-11-22T10:15:30Z\","
                                + "\"sqltext\":\"SELECT '\\u00e9\\ud83c\\udf89'\"}}");
        assertEquals("SELECT 'é🎉'", ok(line).sqltext);
    }

    @Test
    void hugeSqltextIsKeptWhole() {
        char[] big = new char[5 * 1024 * 1024];
        Arrays.fill(big, 'x');
        String sql = "SELECT '" + new String(big) + "'";
        assertEquals(
                sql.length(), ok(PerconaLines.query("select", sql, 0).bytes()).sqltext.length());
    }

    @Test
    void missingOptionalFieldsStayNull() {
        AuditEvent e =
                ok(
                        utf8(
                                "{\"audit_record\":{\"name\":\"Query\",\"record\":\"1_x\",\"timestamp\":\"2026-11-22T10:15:30Z\"}}"));
        assertNull(e.commandClass);
        assertNull(e.status);
        assertNull(e.connectionId);
        assertNull(e.user);
        assertNull(e.sqltext);
    }

    @Test
    void unknownFieldsGoToExtraNestedOnesAsJson() {
        AuditEvent e =
                ok(
                        utf8(
                                "{\"audit_record\":{\"name\":\"Query\",\"record\":\"1_x\",\"timestamp\":\"2026-11-22T10:15:30Z\","
                                        + "\"query_time\":0.25,\"attrs\":{\"a\":[1,2]}},\"ignored_top\":1}"));
        assertEquals("0.25", e.extra.get("query_time"));
        assertEquals("{\"a\":[1,2]}", e.extra.get("attrs"));
    }

    @Test
    void trailingCarriageReturnIsTolerated() {
        byte[] line =
                (new String(PerconaLines.noAudit().bytes(), StandardCharsets.UTF_8) + "\r")
                        .getBytes(StandardCharsets.UTF_8);
        assertEquals("NoAudit", ok(line).eventName);
    }

    @Test
    void missingRequiredFieldsAreNamed() {
        assertEquals(
                "missing required field 'record'",
                failure(PerconaLines.query("select", "x", 0).without("record").bytes()));
        assertEquals(
                "missing required field 'name'",
                failure(PerconaLines.query("select", "x", 0).without("name").bytes()));
        assertEquals(
                "missing required field 'timestamp'",
                failure(PerconaLines.query("select", "x", 0).without("timestamp").bytes()));
    }

    @Test
    void badTimestampIsNamed() {
        assertTrue(
                failure(PerconaLines.noAudit().with("timestamp", "yesterday").bytes())
                        .contains("'yesterday'"));
    }

    @Test
    void nonIntegerStatusAndConnectionIdAreRejected() {
        assertTrue(
                failure(PerconaLines.connect("a", 0).with("status", "ok").bytes())
                        .startsWith("field 'status' is not an integer"));
        assertTrue(
                failure(PerconaLines.connect("a", 0).with("connection_id", "c12").bytes())
                        .startsWith("field 'connection_id'"));
    }

    @Test
    void fieldTypesAreCheckedNotCoerced() {
        // 34 records with "record": 5 once became one event <server>/5 and 33 "duplicates"
        assertEquals(
                "field 'record' is a number, expected a string",
                failure(PerconaLines.connect("a", 0).with("record", 5).bytes()));
        assertEquals(
                "field 'name' is an object, expected a string",
                failure(PerconaLines.connect("a", 0).with("name", Map.of("x", 1)).bytes()));
        assertEquals(
                "field 'user' is an array, expected a string",
                failure(PerconaLines.connect("a", 0).with("user", List.of("root")).bytes()));
        assertEquals(
                "field 'timestamp' is a number, expected a string",
                failure(PerconaLines.connect("a", 0).with("timestamp", 1763806530).bytes()));
        assertEquals(
                "field 'status' is a boolean, expected an integer",
                failure(PerconaLines.connect("a", 0).with("status", true).bytes()));
        assertEquals(
                "field 'connection_id' is an object, expected an integer",
                failure(PerconaLines.connect("a", 0).with("connection_id", Map.of()).bytes()));
        assertEquals(
                "field 'sqltext' is a number, expected a string",
                failure(PerconaLines.query("select", "SELECT 1", 0).with("sqltext", 1).bytes()));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"audit_record\":{\"name\":\"Query\"", // truncated
                "{\"audit_record\":{\"name\":\"Query\",}}", // trailing comma
                "audit_record name=Query", // not JSON
                "{\"audit_record\":{\"name\":\"Q\\x\"}}", // bad escape
            })
    void invalidJsonIsAFailureWithAReason(String line) {
        String reason = failure(utf8(line));
        assertTrue(reason.startsWith("invalid JSON") || reason.equals("not a JSON object"), reason);
    }

    @Test
    void structuralProblemsAreNamed() {
        assertEquals("not a JSON object", failure(utf8("[1,2]")));
        assertEquals(
                "'audit_record' is not a JSON object", failure(utf8("{\"audit_record\":\"x\"}")));
        assertEquals(
                "not a Percona audit record: no 'audit_record' object",
                failure(utf8("{\"other\":{}}")));
        assertEquals(
                "trailing content after the JSON object",
                failure(
                        utf8(
                                new String(PerconaLines.noAudit().bytes(), StandardCharsets.UTF_8)
                                        + " {}")));
    }

    @Test
    void emptyAndBlankLinesAreFailures() {
        assertEquals("empty line", failure(new byte[0]));
        assertEquals("empty line", failure(utf8("  \t\r")));
    }

    @Test
    void invalidUtf8IsRejectedWithItsOffset() {
        byte[] good = PerconaLines.query("select", "SELECT 'ab'", 0).bytes();
        byte[] bad = Arrays.copyOf(good, good.length);
        int at = new String(good, StandardCharsets.UTF_8).indexOf("ab");
        bad[at] = (byte) 0xff;
        assertEquals("invalid UTF-8 at byte " + at, failure(bad));
    }

    @Test
    void unknownFormatIsAFailureFromTheRegistry() {
        SourceDescriptor xml = new SourceDescriptor("db-01", "percona-xml-v9", "", "");
        ParseResult r = AuditFormats.parse(PerconaLines.noAudit().bytes(), xml);
        assertFalse(r.isOk());
        assertTrue(r.failureReason().startsWith("unknown audit format 'percona-xml-v9'"));
    }

    @Test
    void sameLineGivesTheSameEvent() {
        byte[] line = PerconaLines.connect("app", 1045).bytes();
        assertEquals(ok(line), ok(line.clone()));
    }
}
