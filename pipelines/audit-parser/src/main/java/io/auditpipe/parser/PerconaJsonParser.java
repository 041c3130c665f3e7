package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Percona Server audit_log plugin, {@code audit_log_format=JSON}: one object per line, {@code
 * {"audit_record":{"name":..,"record":..,"timestamp":..,...}}}.
 *
 * <p>Which fields appear depends on the event: {@code Audit}/{@code NoAudit} (plugin start/stop)
 * carry server details, {@code Connect}/{@code Quit}/{@code Change user} the login fields ({@code
 * priv_user}, {@code os_login}, {@code proxy_user}), query-type events ({@code Query}, {@code
 * Execute}, {@code Init DB}, ...) {@code command_class}, {@code sqltext} and the account string
 * {@code user[priv] @ host [ip]}. Required in every record: name, record, timestamp.
 *
 * <p>Login outcome: a {@code Connect} or {@code Change user} with status 0 succeeded, any other
 * status (the MySQL error code, e.g. 1045 access denied) is a failed login.
 *
 * <p>Streaming Jackson, no tree: this sits on the hot path of the Flink job.
 */
public final class PerconaJsonParser extends ReadableRecordParser {
    public static final String FORMAT = "percona-json";

    public PerconaJsonParser() {
        super(FORMAT, Framing.LINES);
    }

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        try (JsonParser p = RecordText.JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return ParseResult.failed("not a JSON object");
            }
            AuditEvent event = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if ("audit_record".equals(field)) {
                    if (value != JsonToken.START_OBJECT) {
                        return ParseResult.failed("'audit_record' is not a JSON object");
                    }
                    event = PerconaRecords.newEvent();
                    String problem = readRecord(p, event, source);
                    if (problem != null) {
                        return ParseResult.failed(problem);
                    }
                } else {
                    p.skipChildren();
                }
            }
            if (p.nextToken() != null) {
                return ParseResult.failed("trailing content after the JSON object");
            }
            if (event == null) {
                return ParseResult.failed("not a Percona audit record: no 'audit_record' object");
            }
            return PerconaRecords.finish(event, source);
        } catch (IOException | RuntimeException e) {
            return RecordText.unreadable(e, false);
        }
    }

    /**
     * Reads the fields of audit_record; returns a problem description or null.
     *
     * <p>Types are checked, never coerced: the plugin writes every text field as a JSON string, and
     * status and connection_id as integers (a number or a string of digits, by version). A record
     * with {@code "record": 5} or an object where a user name belongs is not what a server wrote,
     * and trusting it would give it an identity it does not have; it becomes a dead letter naming
     * the field.
     */
    private static String readRecord(JsonParser p, AuditEvent e, SourceDescriptor source)
            throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            boolean integerField = "status".equals(field) || "connection_id".equals(field);
            if (!isTextField(field) && !integerField) {
                e.extra.put(field, RecordText.anyAsText(p, value));
                continue;
            }
            if (integerField) {
                // an integer, as a number or as a string of digits (versions differ); empty =
                // absent
                if (value == JsonToken.VALUE_NULL
                        || (value == JsonToken.VALUE_STRING && p.getText().isEmpty())) continue;
                if (value != JsonToken.VALUE_NUMBER_INT && value != JsonToken.VALUE_STRING) {
                    return RecordText.wrongType(p, value, field, "an integer");
                }
                String problem = PerconaRecords.setInteger(e, field, p.getText());
                if (problem != null) return problem;
                continue;
            }
            if (value != JsonToken.VALUE_STRING && value != JsonToken.VALUE_NULL) {
                return RecordText.wrongType(p, value, field, "a string");
            }
            String text = value == JsonToken.VALUE_NULL ? null : p.getText();
            String problem = PerconaRecords.setText(e, field, text, source);
            if (problem != null) return problem;
        }
        return null;
    }

    /**
     * The plugin's JSON has {@code record}; {@code record_id} (the XML name of other writers) is
     * not its.
     */
    private static boolean isTextField(String field) {
        return PerconaRecords.KNOWN_TEXT_FIELDS.contains(field) && !field.equals("record_id");
    }
}
