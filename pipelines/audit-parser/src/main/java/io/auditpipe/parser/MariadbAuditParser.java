package io.auditpipe.parser;

import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * MariaDB's server_audit plugin, file output: one record per line, {@code
 * timestamp,serverhost,username,host,connectionid,queryid,operation,database,object,retcode}.
 *
 * <p>What the plugin writes (server_audit.c; fixtures in the tests are lines a MariaDB 10.11 server
 * wrote): the timestamp as {@code yyyyMMdd HH:mm:ss} (or another {@code
 * server_audit_timestamp_format}: {@link #TIMESTAMP_LAYOUT}) in the server's local time (converted
 * with the source's time zone, key field {@code timezone}, default UTC; in the hour a clock turns
 * back, a local time is ambiguous and the earlier instant is taken); {@code object} of a QUERY is
 * the statement in single quotes with {@code '} and {@code \} escaped by a backslash and newlines
 * and tabs written as {@code \n}, {@code \t} (passwords masked as {@code *****}); of a table event
 * (READ, WRITE, CREATE, ALTER, DROP, RENAME) it is the table, unquoted, and the retcode is empty.
 * Connection events (CONNECT, FAILED_CONNECT, DISCONNECT, CHANGEUSER) have query id 0 and an empty
 * object; newer versions append the connection type (or the TLS version), kept in {@code
 * extra.more}. The host is {@code host:port} in MariaDB 12 and the enterprise plugin ({@code
 * localhost:unavailable} for a socket): the port goes to {@code extra.client_port}. A RENAME's
 * object is {@code old|new}, both tables (Enricher).
 *
 * <p>Identity: the plugin writes no record id. The event id is {@code
 * <timestamp>-<connectionid>-<queryid>-<12 hex digits of the line's SHA-256>}: the same line
 * shipped twice gets the same id; two lines that differ in any byte get different ids. Weaker than
 * Percona's record id in one case only: two lines identical byte for byte (same second, connection,
 * query, operation and object) are one event.
 *
 * <p>Login outcome: CONNECT succeeded, FAILED_CONNECT failed (retcode is the error, e.g. 1045);
 * CHANGEUSER by its retcode.
 */
public final class MariadbAuditParser extends ReadableRecordParser {
    public static final String FORMAT = "mariadb-audit";

    /**
     * Amazon Aurora MySQL's advanced auditing: the same ten fields, the timestamp in epoch
     * microseconds ({@code 1795600000123456,...}); the object quoted and escaped as MariaDB's (a
     * comma inside the quotes is not escaped, and is read as part of it). Identity as MariaDB's,
     * the microseconds first: Aurora writes several files per instance whose rows are not in time
     * order, and the id depends on the line alone. The CloudWatch Logs export writes each line
     * after its ingestion time ({@code 2026-11-20T11:00:01.123Z 1795...}): that prefix is read
     * past.
     */
    public static final String AURORA = "aurora-audit";

    private final boolean aurora;

    public MariadbAuditParser() {
        this(FORMAT);
    }

    public MariadbAuditParser(String format) {
        super(format, Framing.LINES);
        if (!FORMAT.equals(format) && !AURORA.equals(format))
            throw new IllegalArgumentException(format);
        this.aurora = AURORA.equals(format);
    }

    /** How many digits an Aurora timestamp has: epoch microseconds from 2001-09-09 to 2286. */
    private static final int AURORA_DIGITS = 16;

    /**
     * Where an Aurora record begins after the CloudWatch export's time ({@code
     * yyyy-MM-ddTHH:mm:ss[.SSS]Z }), or 0.
     */
    static int cloudWatchPrefix(byte[] b) {
        if (b.length < 22 || b[4] != '-' || b[10] != 'T') return 0;
        int space = 0;
        while (space < b.length && space < 40 && b[space] != ' ') space++;
        if (space >= b.length || b[space - 1] != 'Z') return 0;
        int i = space + 1;
        int digits = 0;
        while (i + digits < b.length && b[i + digits] >= '0' && b[i + digits] <= '9') digits++;
        return digits == AURORA_DIGITS && i + digits < b.length && b[i + digits] == ',' ? i : 0;
    }

    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("yyyyMMdd HH:mm:ss");

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        if (aurora) {
            int from = cloudWatchPrefix(line);
            if (from > 0) line = java.util.Arrays.copyOfRange(line, from, line.length);
        }
        return read(line, source, null);
    }

    /**
     * Through syslog ({@code server_audit_output_type=syslog}) the plugin writes {@code
     * [syslog_info ]serverhost,username,...}: no time of its own (the header's is taken; its local
     * time, formatted as the file's, begins the record id) and {@code server_audit_syslog_info}
     * before the host (kept as {@code extra.syslog_info}). A whole file line forwarded through
     * syslog (it starts with its own time) is read as one.
     */
    @Override
    protected ParseResult parseEnveloped(
            byte[] body, SourceDescriptor source, SyslogEnvelope envelope) {
        if (aurora || ownTimestamp(body)) return parseReadable(body, source);
        if (envelope.timeMillis() == Long.MIN_VALUE) {
            return ParseResult.failed(
                    "a server_audit record sent through syslog has no time of its own, and its "
                            + "syslog header gives none");
        }
        return read(body, source, envelope);
    }

    private static final DateTimeFormatter ID_TIME =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss");

    /**
     * Whether the line begins with a time the plugin wrote ({@link #TIMESTAMP_LAYOUT}): the file's
     * own.
     */
    private static boolean ownTimestamp(byte[] b) {
        int comma = 0;
        while (comma < b.length && comma < 48 && b[comma] != ',') comma++;
        return comma < b.length
                && b[comma] == ','
                && TIMESTAMP_LAYOUT
                        .matcher(new String(b, 0, comma, StandardCharsets.US_ASCII))
                        .matches();
    }

    /**
     * The times {@code server_audit_timestamp_format} can make that carry no comma: the default
     * {@code %Y%m%d %H:%i:%s} ({@code 20261127 15:04:05}), and the same parts with or without the
     * date's dashes and the time's colons, {@code T} or a space between them, a fraction of a
     * second and an offset ({@code %Y%m%dT%H:%i:%s.%f%z}: {@code 20231207T13:14:28.481161+0100}).
     * Without an offset the time is read in the source's time zone.
     */
    static final java.util.regex.Pattern TIMESTAMP_LAYOUT =
            java.util.regex.Pattern.compile(
                    "(\\d{4})-?(\\d{2})-?(\\d{2})[ T](\\d{2}):?(\\d{2}):?(\\d{2})(?:[.](\\d{1,9}))? ?(Z|[+-]\\d{2}:?\\d{2})?");

    static long timestampMillis(String text, java.time.ZoneId zone) {
        if (text.length() == 17
                && text.charAt(8) == ' '
                && text.charAt(11) == ':'
                && text.charAt(14) == ':') { // the default layout
            return LocalDateTime.parse(text, TIMESTAMP).atZone(zone).toInstant().toEpochMilli();
        }
        java.util.regex.Matcher m = TIMESTAMP_LAYOUT.matcher(text);
        if (!m.matches()) throw new IllegalArgumentException(text);
        String fraction = m.group(7) == null ? "0" : (m.group(7) + "00000000").substring(0, 9);
        LocalDateTime local =
                LocalDateTime.of(
                        Integer.parseInt(m.group(1)),
                        Integer.parseInt(m.group(2)),
                        Integer.parseInt(m.group(3)),
                        Integer.parseInt(m.group(4)),
                        Integer.parseInt(m.group(5)),
                        Integer.parseInt(m.group(6)),
                        Integer.parseInt(fraction));
        if (m.group(8) == null) return local.atZone(zone).toInstant().toEpochMilli();
        String offset = m.group(8);
        java.time.ZoneOffset at =
                "Z".equals(offset)
                        ? java.time.ZoneOffset.UTC
                        : java.time.ZoneOffset.of(
                                offset.length() == 5
                                        ? offset.substring(0, 3) + ":" + offset.substring(3)
                                        : offset);
        return local.atOffset(at).toInstant().toEpochMilli();
    }

    private ParseResult read(byte[] line, SourceDescriptor source, SyslogEnvelope envelope) {
        String text = new String(line, StandardCharsets.UTF_8);
        String info = null;
        if (envelope
                // [syslog_info ]serverhost,...: the host is the word before the first comma
                != null) {
            int comma = text.indexOf(',');
            if (comma < 0)
                return ParseResult.failed("not a server_audit record: no comma-separated fields");
            int hostStart = text.lastIndexOf(' ', comma) + 1;
            info = text.substring(0, hostStart).trim();
            text = text.substring(hostStart);
        }
        Fields f = new Fields(text);
        String timestamp = envelope == null ? f.plain() : null;
        String serverhost = f.plain();
        String username = f.plain();
        String host = f.plain();
        String connectionId = f.plain();
        String queryId = f.plain();
        String operation = f.plain();
        String database = f.plain();
        if (database == null) {
            return tooFewFields(f, envelope);
        }
        String object;
        try {
            object = f.object();
        } catch (IllegalArgumentException e) {
            return ParseResult.failed(e.getMessage());
        }
        String retcode = f.plain();
        if (retcode == null) {
            return tooFewFields(f, envelope);
        }
        long millis;
        String idTime;
        if (envelope != null) {
            millis = envelope.timeMillis();
            idTime = java.time.Instant.ofEpochMilli(millis).atZone(source.zone()).format(ID_TIME);
        } else {
            if (aurora) {
                if (timestamp.length() != AURORA_DIGITS || !isDigits(timestamp)) {
                    return ParseResult.failed(
                            "timestamp '" + timestamp + "' is not epoch microseconds (16 digits)");
                }
                millis = Long.parseLong(timestamp) / 1000;
            } else
                try {
                    millis = timestampMillis(timestamp, source.zone());
                } catch (java.time.DateTimeException | IllegalArgumentException e) {
                    return ParseResult.failed(
                            "timestamp '"
                                    + timestamp
                                    + "' is not yyyyMMdd HH:mm:ss (nor another"
                                    + " server_audit_timestamp_format of a date, a time, a fraction and an offset)");
                }
            idTime = aurora ? timestamp : timestamp.replace(" ", "T").replace(":", "");
        }
        if (!isDigits(connectionId)) {
            return ParseResult.failed("connection id '" + connectionId + "' is not a number");
        }
        if (!isDigits(queryId)) {
            return ParseResult.failed("query id '" + queryId + "' is not a number");
        }
        if (operation.isEmpty()
                || !operation.chars().allMatch(c -> (c >= 'A' && c <= 'Z') || c == '_')) {
            return ParseResult.failed("operation '" + operation + "' is not an upper-case word");
        }
        if (!retcode.isEmpty()
                && !isDigits(retcode)
                && !(retcode.startsWith("-") && isDigits(retcode.substring(1)))) {
            return ParseResult.failed("retcode '" + retcode + "' is not a number");
        }

        AuditEvent e = new AuditEvent();
        e.setSource(source);
        e.eventTimeMillis = millis;
        e.eventName = operation;
        e.user = username;
        int port = hostPort(host);
        if (port > 0) {
            String portText = host.substring(port + 1);
            if (!"unavailable".equals(portText)) e.extra.put("client_port", portText);
            host = host.substring(0, port);
        }
        e.host = host;
        e.db = database.isEmpty() ? null : database;
        try {
            e.connectionId = Long.parseLong(connectionId);
            e.status = retcode.isEmpty() ? null : Integer.valueOf(retcode);
        } catch (NumberFormatException ex) {
            return ParseResult.failed("a number out of range: " + ex.getMessage());
        }
        e.extra.put("serverhost", serverhost);
        if (info != null && !info.isEmpty()) e.extra.put("syslog_info", info);
        e.extra.put("query_id", queryId);
        if ("QUERY".equals(operation)) {
            e.sqltext = object;
            e.commandClass = firstKeyword(object);
        } else if (object != null && !object.isEmpty()) {
            e.extra.put("object", object);
        }
        String rest = f.rest();
        // e.g. the connection type newer versions append; RDS for MySQL ends a query record with
        // two empty fields: nothing to keep
        if (rest != null && !rest.chars().allMatch(c -> c == ',')) {
            e.extra.put("more", rest);
        }
        if ("CONNECT".equals(operation)) {
            e.authOutcome = AuditEvent.AUTH_SUCCESS;
        } else if ("FAILED_CONNECT".equals(operation)) {
            e.authOutcome = AuditEvent.AUTH_FAILURE;
        } else if ("CHANGEUSER".equals(operation)) {
            e.authOutcome = e.loginOutcome();
        }
        e.recordId =
                idTime
                        + "-"
                        + connectionId
                        + "-"
                        + queryId
                        + "-"
                        + Digests.sha256Hex(line).substring(0, 12);
        e.id = EventIds.eventId(source.server(), e.recordId);
        return ParseResult.ok(e);
    }

    /**
     * Where the port begins in a {@code host:port} host (MariaDB 12 and the enterprise plugin write
     * the client's port, {@code localhost:unavailable} for a socket), or -1: a port is digits or
     * {@code unavailable} after the only colon, so an IPv6 address (several colons) is kept whole.
     */
    static int hostPort(String host) {
        int colon = host.lastIndexOf(':');
        if (colon <= 0 || host.indexOf(':') != colon) return -1;
        String port = host.substring(colon + 1);
        return "unavailable".equals(port) || (port.length() <= 5 && isDigits(port)) ? colon : -1;
    }

    /** The statement's first word, lower case ("select", "insert", "grant"...), or null. */
    static String firstKeyword(String sql) {
        if (sql == null) return null;
        int i = 0;
        while (i < sql.length() && (Character.isWhitespace(sql.charAt(i)) || sql.charAt(i) == '('))
            i++;
        int start = i;
        while (i < sql.length() && Character.isLetter(sql.charAt(i))) i++;
        return i > start ? sql.substring(start, i).toLowerCase(java.util.Locale.ROOT) : null;
    }

    private static boolean isDigits(String s) {
        if (s == null || s.isEmpty()) return false;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
        }
        return true;
    }

    /**
     * A line with fewer fields than server_audit writes (the syslog envelope carries the first).
     */
    private static ParseResult tooFewFields(Fields f, SyslogEnvelope envelope) {
        return ParseResult.failed(
                "not a server_audit record: "
                        + f.count
                        + " of at least "
                        + (envelope == null ? 10 : 9)
                        + " comma-separated fields");
    }

    /** Reads the comma-separated fields left to right; only the object may be quoted. */
    private static final class Fields {
        private final String s;
        private int pos;
        int count;

        Fields(String s) {
            this.s = s;
        }

        /** The next unquoted field, or null when the line has no more. */
        String plain() {
            if (pos > s.length()) return null;
            int comma = s.indexOf(',', pos);
            String v = comma < 0 ? s.substring(pos) : s.substring(pos, comma);
            pos = comma < 0 ? s.length() + 1 : comma + 1;
            count++;
            return v;
        }

        /** The object: a single-quoted string with backslash escapes, or a plain field. */
        String object() {
            if (pos >= s.length() || s.charAt(pos) != '\'') {
                return plain();
            }
            StringBuilder b = new StringBuilder();
            int i = pos + 1;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c == '\\' && i + 1 < s.length()) {
                    char n = s.charAt(i + 1);
                    b.append(n == 'n' ? '\n' : n == 'r' ? '\r' : n == 't' ? '\t' : n);
                    i += 2;
                } else if (c == '\'') {
                    if (i + 1 < s.length() && s.charAt(i + 1) != ',') {
                        throw new IllegalArgumentException(
                                "the quoted object ends at character "
                                        + i
                                        + " but no comma follows it");
                    }
                    pos = i + 2;
                    count++;
                    return b.toString();
                } else {
                    b.append(c);
                    i++;
                }
            }
            throw new IllegalArgumentException(
                    "the quoted object is not closed (the line was cut?)");
        }

        /** Whatever follows the retcode, or null. */
        String rest() {
            return pos <= s.length() ? s.substring(pos) : null;
        }
    }
}
