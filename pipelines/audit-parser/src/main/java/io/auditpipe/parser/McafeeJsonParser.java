package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * The McAfee (now Trellix) audit plugin for MySQL, JSON file output: one object per line. From its
 * source (src/audit_handler.cc, Audit_json_formatter): {@code {"msg-type":"activity",
 * "date":"1510038432019","thread-id":"43","query-id":"1891","user":"root","priv_user":"root",
 * "ip":"127.0.0.1","host":"localhost","client_port":"52102","rows":"1","status":"0","cmd":"insert",
 * "objects":[{"db":"test","name":"t1","obj_type":"TABLE"}],"query":"insert into t1 values (1)"}};
 * numbers are written as strings ({@code date} is epoch milliseconds); when the plugin starts it
 * writes a {@code "msg-type":"header"} record (versions, host name, port).
 *
 * <p>Mapping: {@code event_name} = cmd ({@code Connect}, {@code Quit}, {@code Failed Login}, {@code
 * select}, {@code insert} ...; {@code header} for the start record), {@code command_class} = cmd in
 * lower case for statements, {@code connection_id} = thread-id, {@code sqltext} = query, {@code
 * user}, {@code priv_user}, {@code host}, {@code ip}, {@code os_user}, {@code status}; objects,
 * rows, query-id and the rest in {@code extra}. Login outcome: Connect succeeded, Failed Login
 * failed. A key written twice in one record (the plugin writes {@code os_user} of its own and again
 * among the client's connection attributes): the first value is read; a later one that differs is
 * kept as {@code extra.<key>#2} (#3 ...), never dropped.
 *
 * <p>Identity: the plugin writes no record id. As for MariaDB's server_audit, the id is {@code
 * <date>-<thread-id>-<query-id>-<12 hex of the line's SHA-256>}: the same line shipped twice is one
 * event; byte-identical lines in the same millisecond are one event (the weaker case).
 */
public final class McafeeJsonParser extends ReadableRecordParser {
    public static final String FORMAT = "mcafee-json";

    public McafeeJsonParser() {
        super(FORMAT, Framing.LINES);
    }

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        AuditEvent e = new AuditEvent();
        String msgType = null, date = null, thread = null, queryId = null, cmd = null;
        try (JsonParser p = RecordText.JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return ParseResult.failed("not a JSON object");
            }
            java.util.Map<String, String> seen = new java.util.HashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (seen.containsKey(
                        // a key the plugin wrote twice (os_user: once of its own, once from the
                        // client)
                        field)) {
                    String again = RecordText.anyAsText(p, value);
                    if (!java.util.Objects.equals(again, seen.get(field))) {
                        int n = 2;
                        while (e.extra.containsKey(field + "#" + n)) n++;
                        e.extra.put(field + "#" + n, again);
                    }
                    continue;
                }
                if (value.isScalarValue())
                    seen.put(field, value == JsonToken.VALUE_NULL ? null : p.getText());
                else seen.put(field, null);
                switch (field) {
                    case "msg-type",
                            "date",
                            "thread-id",
                            "query-id",
                            "cmd",
                            "user",
                            "priv_user",
                            "host",
                            "ip",
                            "os_user",
                            "query",
                            "status" -> {
                        if (value != JsonToken.VALUE_STRING
                                && value != JsonToken.VALUE_NUMBER_INT
                                && value != JsonToken.VALUE_NULL) {
                            return ParseResult.failed(
                                    RecordText.wrongType(p, value, field, "a string"));
                        }
                        String text = value == JsonToken.VALUE_NULL ? null : p.getText();
                        switch (field) {
                            case "msg-type" -> msgType = text;
                            case "date" -> date = text;
                            case "thread-id" -> thread = text;
                            case "query-id" -> queryId = text;
                            case "cmd" -> cmd = text;
                            // named as Percona's plugin names them
                            case "user", "priv_user", "host", "ip", "os_user" ->
                                    PerconaRecords.setText(e, field, text, source);
                            case "query" -> e.sqltext = text;
                            case "status" -> {
                                String problem = PerconaRecords.setInteger(e, "status", text);
                                if (problem != null) return ParseResult.failed(problem);
                            }
                            default -> throw new IllegalStateException(field);
                        }
                    }
                    default -> e.extra.put(field, RecordText.anyAsText(p, value));
                }
            }
            if (p.nextToken() != null) {
                return ParseResult.failed("trailing content after the JSON object");
            }
        } catch (IOException | RuntimeException ex) {
            return RecordText.unreadable(ex, false);
        }
        if (msgType == null || msgType.isEmpty())
            return ParseResult.failed("missing required field 'msg-type'");
        if (date == null || !date.matches("\\d{1,15}")) {
            return ParseResult.failed(
                    date == null
                            ? "missing required field 'date'"
                            : "field 'date' is not epoch milliseconds: '" + date + "'");
        }
        boolean activity = "activity".equals(msgType);
        if (activity && (cmd == null || cmd.isEmpty()))
            return ParseResult.failed("missing required field 'cmd'");
        // at most 18 digits: every such number fits a long (the plugin writes 64-bit unsigned ids)
        if (thread != null && !thread.matches("\\d{1,18}"))
            return ParseResult.failed("field 'thread-id' is not a number: '" + thread + "'");
        if (queryId != null && !queryId.matches("\\d{1,18}"))
            return ParseResult.failed("field 'query-id' is not a number: '" + queryId + "'");
        e.eventTimeMillis = Long.parseLong(date);
        e.eventName = activity ? cmd : msgType;
        if (!activity) e.extra.put("msg-type", msgType);
        if (thread != null) e.connectionId = Long.parseLong(thread);
        if (queryId != null) e.extra.put("query_id", queryId);
        if (activity
                && !"Connect".equals(cmd)
                && !"Quit".equals(cmd)
                && !"Failed Login".equals(cmd)) {
            e.commandClass = cmd.toLowerCase(java.util.Locale.ROOT);
        }
        if ("Connect".equals(cmd)) e.authOutcome = AuditEvent.AUTH_SUCCESS;
        if ("Failed Login".equals(cmd)) e.authOutcome = AuditEvent.AUTH_FAILURE;
        e.setSource(source);
        e.recordId =
                date
                        + "-"
                        + (thread == null ? "0" : thread)
                        + "-"
                        + (queryId == null ? "0" : queryId)
                        + "-"
                        + Digests.sha256Hex(line).substring(0, 12);
        e.id = EventIds.eventId(source.server(), e.recordId);
        return ParseResult.ok(e);
    }
}
