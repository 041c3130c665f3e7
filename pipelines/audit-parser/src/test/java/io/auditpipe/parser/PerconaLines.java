package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Test fixtures: Percona audit_log JSON lines built field by field, the way the plugin writes them
 * (field sets per event kind follow Percona Server 8.0). Named instants instead of inline JSON.
 */
final class PerconaLines {
    static final Instant T0 = Instant.parse("2026-11-22T10:15:30Z");
    static final String T0_PERCONA_57 = "2026-11-22T10:15:30 UTC";
    static final String T0_PERCONA_80 = "2026-11-22T10:15:30Z";
    static final SourceDescriptor DB01 =
            new SourceDescriptor(
                    "db-01", PerconaJsonParser.FORMAT, "/var/lib/mysql/audit.log", "rsyslog");

    private final Map<String, Object> fields = new LinkedHashMap<>();

    private PerconaLines(String name, long seq) {
        fields.put("name", name);
        fields.put("record", seq + "_2026-11-22T09:00:00");
        fields.put("timestamp", T0_PERCONA_80);
    }

    static PerconaLines audit() {
        return new PerconaLines("Audit", 1)
                .with("mysql_version", "8.0.36-28")
                .with("startup_optionsi", "--port=3306")
                .with("os_version", "x86_64-Linux");
    }

    static PerconaLines noAudit() {
        return new PerconaLines("NoAudit", 99);
    }

    static PerconaLines connect(String user, int status) {
        return new PerconaLines("Connect", 2)
                .with("connection_id", "12")
                .with("status", status)
                .with("user", user)
                .with("priv_user", status == 0 ? user : "")
                .with("os_login", "")
                .with("proxy_user", "")
                .with("host", "app-1")
                .with("ip", "10.0.0.5")
                .with("db", "shop");
    }

    static PerconaLines quit(String user) {
        return new PerconaLines("Quit", 5)
                .with("connection_id", "12")
                .with("status", 0)
                .with("user", user)
                .with("priv_user", user)
                .with("os_login", "")
                .with("proxy_user", "")
                .with("host", "app-1")
                .with("ip", "10.0.0.5")
                .with("db", "shop");
    }

    static PerconaLines changeUser(String user, int status) {
        return connect(user, status)
                .with("name", "Change user")
                .with("record", "4_2026-11-22T09:00:00");
    }

    static PerconaLines query(String commandClass, String sql, int status) {
        return new PerconaLines("Query", 3)
                .with("command_class", commandClass)
                .with("connection_id", "12")
                .with("status", status)
                .with("sqltext", sql)
                .with("user", "app[app] @ app-1 [10.0.0.5]")
                .with("host", "app-1")
                .with("os_user", "")
                .with("ip", "10.0.0.5")
                .with("db", "shop");
    }

    PerconaLines with(String field, Object value) {
        fields.put(field, value);
        return this;
    }

    PerconaLines without(String field) {
        fields.remove(field);
        return this;
    }

    byte[] bytes() {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
                g.writeStartObject();
                g.writeObjectFieldStart("audit_record");
                for (Map.Entry<String, Object> f : fields.entrySet()) {
                    if (f.getValue() instanceof Integer) {
                        g.writeNumberField(f.getKey(), (Integer) f.getValue());
                    } else if (f.getValue() instanceof Boolean) {
                        g.writeBooleanField(f.getKey(), (Boolean) f.getValue());
                    } else if (f.getValue() instanceof Map) {
                        g.writeObjectFieldStart(f.getKey());
                        for (Map.Entry<?, ?> m : ((Map<?, ?>) f.getValue()).entrySet()) {
                            g.writeStringField(
                                    String.valueOf(m.getKey()), String.valueOf(m.getValue()));
                        }
                        g.writeEndObject();
                    } else if (f.getValue() instanceof java.util.List) {
                        g.writeArrayFieldStart(f.getKey());
                        for (Object o : (java.util.List<?>) f.getValue()) {
                            g.writeString(String.valueOf(o));
                        }
                        g.writeEndArray();
                    } else {
                        g.writeStringField(f.getKey(), String.valueOf(f.getValue()));
                    }
                }
                g.writeEndObject();
                g.writeEndObject();
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
