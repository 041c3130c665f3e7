package io.auditpipe.parser;

import java.util.Locale;
import java.util.Set;

/**
 * The fields of a Percona-style audit record, whatever syntax carried them: the Percona audit_log
 * plugin writes the same record as JSON, OLD XML (attributes), NEW XML (child elements) or CSV, and
 * MySQL Enterprise Audit's XML (and Percona's audit_log_filter XML) uses the same names with {@code
 * RECORD_ID} for {@code RECORD}. Each syntax's parser hands the fields here by their lower-case
 * name; one place maps them into the event model and decides what is required.
 */
final class PerconaRecords {
    private PerconaRecords() {}

    static final long NO_TIMESTAMP = Long.MIN_VALUE;

    /** Field names that map to a model field; everything else goes to {@code extra}. */
    static final Set<String> KNOWN_TEXT_FIELDS =
            Set.of(
                    "name",
                    "record",
                    "record_id",
                    "timestamp",
                    "command_class",
                    "sqltext",
                    "user",
                    "priv_user",
                    "os_user",
                    "os_login",
                    "proxy_user",
                    "host",
                    "ip",
                    "db");

    static final Set<String> INTEGER_FIELDS = Set.of("status", "connection_id");

    static AuditEvent newEvent() {
        AuditEvent e = new AuditEvent();
        e.eventTimeMillis = NO_TIMESTAMP;
        return e;
    }

    /**
     * Sets one field given as text (XML attribute or element, CSV column); returns the problem or
     * null. Integer fields must be digits (empty = absent); unknown fields go to extra.
     */
    static String set(AuditEvent e, String field, String text, SourceDescriptor source) {
        String name = field.toLowerCase(Locale.ROOT);
        if (INTEGER_FIELDS.contains(name)) {
            return setInteger(e, name, text);
        }
        if (!KNOWN_TEXT_FIELDS.contains(name)) {
            e.extra.put(name, text);
            return null;
        }
        return setText(e, name, text, source);
    }

    static String setInteger(AuditEvent e, String name, String text) {
        if (text == null || text.trim().isEmpty()) return null;
        try {
            if ("status".equals(name)) {
                e.status = Integer.parseInt(text.trim());
            } else {
                e.connectionId = Long.parseLong(text.trim());
            }
            return null;
        } catch (NumberFormatException ex) {
            return "field '" + name + "' is not an integer: '" + text + "'";
        }
    }

    /**
     * A known text field (lower-case name from {@link #KNOWN_TEXT_FIELDS}); returns the problem or
     * null.
     */
    static String setText(AuditEvent e, String name, String text, SourceDescriptor source) {
        switch (name) {
            case "name" -> e.eventName = text;
            case "record", "record_id" -> e.recordId = text;
            case "timestamp" -> {
                if (text == null) return "field 'timestamp' is null, expected a string";
                try {
                    e.eventTimeMillis = AuditTimestamps.parseEpochMillis(text, source.zone());
                } catch (IllegalArgumentException ex) {
                    return ex.getMessage();
                }
            }
            case "command_class" -> e.commandClass = text;
            case "sqltext" -> e.sqltext = text;
            case "user" -> e.user = text;
            case "priv_user" -> e.privUser = text;
            case "os_user" -> e.osUser = text;
            case "os_login" -> e.osLogin = text;
            case "proxy_user" -> e.proxyUser = text;
            case "host" -> e.host = text;
            case "ip" -> e.ip = text;
            case "db" -> e.db = text;
            default -> throw new IllegalStateException("unhandled field " + name);
        }
        return null;
    }

    /**
     * Checks the required fields (name, record, timestamp), sets the identity and the source, and
     * derives what the record implies: the parts of the account string, the login outcome.
     */
    static ParseResult finish(AuditEvent e, SourceDescriptor source) {
        if (e.eventName == null || e.eventName.isEmpty()) {
            return ParseResult.failed("missing required field 'name'");
        }
        if (e.recordId == null || e.recordId.isEmpty()) {
            return ParseResult.failed("missing required field 'record'");
        }
        if (e.eventTimeMillis == NO_TIMESTAMP) {
            return ParseResult.failed("missing required field 'timestamp'");
        }
        e.setSource(source);
        // the syslog handler numbers from each server start: its ids repeat, the record's time
        // tells them apart
        e.id =
                EventIds.eventId(
                        source.server(),
                        RecordNumbers.restartsWithServer(e.recordId)
                                ? e.recordId
                                        + "@"
                                        + java.time.Instant.ofEpochMilli(e.eventTimeMillis)
                                : e.recordId);

        MysqlAccount account = MysqlAccount.parse(e.user);
        if (account != null) {
            e.userRaw = e.user;
            e.user = account.user();
            if (isEmpty(e.privUser)) e.privUser = account.privUser();
            if (isEmpty(e.host)) e.host = account.host();
            if (isEmpty(e.ip)) e.ip = account.ip();
        }
        if ("Connect".equals(e.eventName) || "Change user".equals(e.eventName)) {
            e.authOutcome = e.loginOutcome();
        }
        return ParseResult.ok(e);
    }

    static boolean isEmpty(String s) {
        return s == null || s.isEmpty();
    }
}
