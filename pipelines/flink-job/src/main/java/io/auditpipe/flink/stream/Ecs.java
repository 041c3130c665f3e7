package io.auditpipe.flink.stream;

import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/**
 * The Elastic Common Schema projection of a stored event or an alert, with OpenTelemetry's database
 * attributes under {@code db} (db.system.name, db.namespace, db.query.text, db.operation.name,
 * db.collection.name, db.response.status_code) as ECS takes OpenTelemetry's semantic conventions in
 * (docs/stream.md has the mapping table). Fields the record does not carry are absent.
 */
public final class Ecs {
    private Ecs() {}

    public static final String VERSION = "8.17.0";

    public static Document event(AuditEvent e, long ingestMillis) {
        boolean login = "authentication".equals(e.category);
        Document event =
                new Document("kind", "event")
                        .append("category", List.of(login ? "authentication" : "database"))
                        .append("type", eventType(e))
                        .append("action", e.action != null ? e.action : e.eventName)
                        .append("outcome", e.outcome() != null ? e.outcome() : "unknown")
                        .append("id", e.id)
                        .append("code", e.eventName)
                        .append("dataset", "auditpipe.audit")
                        .append("module", "auditpipe")
                        .append("created", iso(e.eventTimeMillis))
                        .append("ingested", iso(ingestMillis));
        Document d =
                new Document("@timestamp", iso(e.eventTimeMillis))
                        .append("ecs", new Document("version", VERSION))
                        .append("event", event)
                        .append("host", new Document("name", e.server))
                        .append("service", new Document("type", "mysql").append("name", e.server));
        List<String> relatedUsers = new ArrayList<>();
        if (e.user != null) {
            Document user = new Document("name", e.user);
            if (e.principalClass != null) user.append("roles", List.of(e.principalClass));
            d.append("user", user);
            relatedUsers.add(e.user);
        }
        Document source = new Document();
        if (e.ip != null && !e.ip.isEmpty()) source.append("ip", e.ip);
        if (e.host != null && !e.host.isEmpty())
            source.append("domain", e.host).append("address", e.host);
        if (!source.isEmpty()) d.append("source", source);
        Document db =
                new Document(
                        "system",
                        new Document(
                                "name", "mariadb-audit".equals(e.format) ? "mariadb" : "mysql"));
        if (e.db != null) db.append("namespace", e.db);
        if (e.sqltext != null) db.append("query", new Document("text", e.sqltext));
        if (e.commandClass != null) db.append("operation", new Document("name", e.commandClass));
        if (e.tables != null && !e.tables.isEmpty())
            db.append("collection", new Document("name", e.tables.get(0)));
        if (e.status != null)
            db.append("response", new Document("status_code", String.valueOf(e.status)));
        d.append("db", db);
        if (e.connectionId != null)
            d.append("process", new Document("thread", new Document("id", e.connectionId)));
        Document related = new Document();
        if (!relatedUsers.isEmpty()) related.append("user", relatedUsers);
        if (e.ip != null && !e.ip.isEmpty()) related.append("ip", List.of(e.ip));
        if (!related.isEmpty()) d.append("related", related);
        Document labels = new Document();
        if (e.dataClasses != null && !e.dataClasses.isEmpty())
            labels.append("data_classes", String.join(",", e.dataClasses));
        if (e.controls != null && !e.controls.isEmpty())
            labels.append("controls", String.join(",", e.controls));
        if (!labels.isEmpty()) d.append("labels", labels);
        return d;
    }

    public static Document alert(Alert a) {
        Document event =
                new Document("kind", "alert")
                        .append("category", List.of("database"))
                        .append("type", List.of("info"))
                        .append("action", a.rule)
                        .append("id", a.id)
                        .append("severity", Ocsf.severityId(a.severity))
                        .append("dataset", "auditpipe.alerts")
                        .append("module", "auditpipe")
                        .append("start", iso(a.firstEventMillis))
                        .append("end", iso(a.lastEventMillis))
                        .append("created", iso(a.raisedAtMillis));
        Document d =
                new Document("@timestamp", iso(a.raisedAtMillis))
                        .append("ecs", new Document("version", VERSION))
                        .append("event", event)
                        .append("message", a.summary)
                        .append(
                                "rule",
                                new Document("name", a.rule)
                                        .append("id", a.rule)
                                        .append("ruleset", "auditpipe"))
                        .append("host", new Document("name", a.server))
                        .append(
                                "auditpipe",
                                new Document("evidence", a.evidence)
                                        .append("evidence_count", a.evidenceCount));
        Document labels = new Document("severity", a.severity);
        if (a.subject != null) labels.append("subject", a.subject);
        if (a.gapClass != null) labels.append("gap_class", a.gapClass);
        if (!a.controls.isEmpty()) labels.append("controls", String.join(",", a.controls));
        return d.append("labels", labels);
    }

    static List<String> eventType(AuditEvent e) {
        if ("authentication".equals(e.category)) {
            return List.of("logout".equals(e.action) ? "end" : "start");
        }
        if (e.category == null) return List.of("info");
        return switch (e.category) {
            case "data_read" -> List.of("access");
            case "data_write", "schema_change", "administration", "audit_system" ->
                    List.of("change");
            case "account_management" -> List.of("user", "change");
            default -> List.of("info");
        };
    }

    static String iso(long millis) {
        return Instant.ofEpochMilli(millis).toString();
    }
}
