package io.auditpipe.flink.stream;

import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.parser.AuditEvent;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/**
 * The OCSF 1.8.0 projection of a stored event or an alert (docs/stream.md has the mapping table;
 * tests/e2e/job/test_event_stream.py validates what the job writes against the OCSF schema). A
 * login, a change of user or a logout is an Authentication (3002); every other event a Datastore
 * Activity (6005), its activity from the event's category and action; an alert a Detection Finding
 * (2004). Fields the record does not carry are absent, never invented: where OCSF requires one of a
 * set (an actor, a source endpoint, a datastore), the server stands in for what is missing, as the
 * table says.
 */
public final class Ocsf {
    private Ocsf() {}

    public static final String VERSION = "1.8.0";
    static final int DATASTORE_ACTIVITY = 6005;
    static final int AUTHENTICATION = 3002;
    static final int DETECTION_FINDING = 2004;

    // activity ids of Datastore Activity
    static final int READ = 1,
            UPDATE = 2,
            CONNECT = 3,
            QUERY = 4,
            WRITE = 5,
            CREATE = 6,
            DELETE = 7,
            LIST = 8,
            OTHER = 99;
    // activity ids of Authentication
    static final int LOGON = 1, LOGOFF = 2, ACCOUNT_SWITCH = 7;

    /**
     * The event's projection: an Authentication for logins and logouts, else a Datastore Activity.
     */
    public static Document event(AuditEvent e, String version, long ingestMillis) {
        return "authentication".equals(e.category)
                ? authentication(e, version, ingestMillis)
                : datastoreActivity(e, version, ingestMillis);
    }

    static Document datastoreActivity(AuditEvent e, String version, long ingestMillis) {
        int activity = datastoreActivityId(e.category, e.action);
        Document d =
                head(
                        DATASTORE_ACTIVITY,
                        "Datastore Activity",
                        6,
                        "Application Activity",
                        activity,
                        datastoreActivityName(activity),
                        e.eventTimeMillis,
                        1,
                        "Informational",
                        e,
                        version,
                        ingestMillis);
        d.append("actor", actor(e)).append("src_endpoint", source(e));
        Document database =
                new Document("type_id", 1).append("type", "Relational").append("uid", e.server);
        if (e.db != null) database.append("name", e.db);
        d.append("database", database);
        if (e.tables != null && !e.tables.isEmpty())
            d.append("table", new Document("name", e.tables.get(0)));
        if (e.sqltext != null) {
            Document query = new Document("query_string", e.sqltext).append("uid", e.id);
            if (e.commandClass != null) query.append("name", e.commandClass);
            d.append("query_info", query);
        }
        d.append("type_id", e.tables != null && !e.tables.isEmpty() ? 3 : 1)
                .append("type", e.tables != null && !e.tables.isEmpty() ? "Table" : "Database");
        status(d, e);
        return d.append("unmapped", unmapped(e));
    }

    static Document authentication(AuditEvent e, String version, long ingestMillis) {
        int activity =
                "logout".equals(e.action)
                        ? LOGOFF
                        : "change_user".equals(e.action) ? ACCOUNT_SWITCH : LOGON;
        String name =
                activity == LOGOFF
                        ? "Logoff"
                        : activity == ACCOUNT_SWITCH ? "Account Switch" : "Logon";
        Document d =
                head(
                        AUTHENTICATION,
                        "Authentication",
                        3,
                        "Identity & Access Management",
                        activity,
                        name,
                        e.eventTimeMillis,
                        1,
                        "Informational",
                        e,
                        version,
                        ingestMillis);
        d.append("user", user(e))
                .append("src_endpoint", source(e))
                .append("dst_endpoint", new Document("name", e.server))
                .append("service", new Document("name", e.server));
        if (e.connectionId != null)
            d.append("session", new Document("uid", String.valueOf(e.connectionId)));
        status(d, e);
        return d.append("unmapped", unmapped(e));
    }

    /**
     * An alert as a Detection Finding: the rule as the analytic, its evidence events as related
     * events.
     */
    public static Document finding(Alert a, String version) {
        int severity = severityId(a.severity);
        Document d =
                new Document("class_uid", DETECTION_FINDING)
                        .append("class_name", "Detection Finding")
                        .append("category_uid", 2)
                        .append("category_name", "Findings")
                        .append("activity_id", 1)
                        .append("activity_name", "Create")
                        .append("type_uid", DETECTION_FINDING * 100L + 1)
                        .append("type_name", "Detection Finding: Create")
                        .append("time", a.raisedAtMillis)
                        .append("severity_id", severity)
                        .append("severity", severityName(severity))
                        .append("message", a.summary)
                        .append("metadata", metadata(a.id, a.server, version, a.raisedAtMillis));
        List<Document> related = new ArrayList<>();
        for (String id : a.evidence) related.add(new Document("uid", id));
        Document info =
                new Document("uid", a.id)
                        .append("title", a.rule)
                        .append("desc", a.summary)
                        .append("types", List.of(a.rule))
                        .append(
                                "analytic",
                                new Document("name", a.rule)
                                        .append("type_id", 1)
                                        .append("type", "Rule"))
                        .append("created_time", a.raisedAtMillis)
                        .append("first_seen_time", a.firstEventMillis)
                        .append("last_seen_time", a.lastEventMillis)
                        .append("related_events", related)
                        .append("related_events_count", a.evidenceCount);
        d.append("finding_info", info).append("is_alert", true);
        Document unmapped = new Document("server", a.server).append("controls", a.controls);
        if (a.subject != null) unmapped.append("subject", a.subject);
        if (a.gapClass != null) unmapped.append("gap_class", a.gapClass);
        return d.append("unmapped", unmapped);
    }

    private static Document head(
            int classUid,
            String className,
            int categoryUid,
            String categoryName,
            int activity,
            String activityName,
            long time,
            int severityId,
            String severity,
            AuditEvent e,
            String version,
            long ingestMillis) {
        return new Document("class_uid", classUid)
                .append("class_name", className)
                .append("category_uid", categoryUid)
                .append("category_name", categoryName)
                .append("activity_id", activity)
                .append("activity_name", activityName)
                .append("type_uid", classUid * 100L + activity)
                .append("type_name", className + ": " + activityName)
                .append("time", time)
                .append("severity_id", severityId)
                .append("severity", severity)
                .append(
                        "metadata",
                        metadata(e.id, e.server, version, ingestMillis)
                                .append("event_code", e.eventName)
                                .append("original_time", String.valueOf(e.eventTimeMillis)));
    }

    private static Document metadata(String uid, String server, String version, long loggedMillis) {
        return new Document("version", VERSION)
                .append(
                        "product",
                        new Document("name", "auditpipe")
                                .append("vendor_name", "auditpipe")
                                .append("version", version))
                .append("uid", uid)
                .append("log_name", server)
                .append("logged_time", loggedMillis);
    }

    private static Document actor(AuditEvent e) {
        Document actor = new Document();
        if (e.user != null) actor.append("user", user(e));
        else
            actor.append(
                    "app_name", e.server); // a record of the server itself (the audit plugin's own)
        if (e.connectionId != null)
            actor.append("session", new Document("uid", String.valueOf(e.connectionId)));
        return actor;
    }

    private static Document user(AuditEvent e) {
        Document u = new Document("name", e.user != null ? e.user : "");
        if ("administrator".equals(e.principalClass))
            u.append("type_id", 2).append("type", "Admin");
        else if ("service_account".equals(e.principalClass))
            u.append("type_id", 4).append("type", "Service");
        else if ("person".equals(e.principalClass)) u.append("type_id", 1).append("type", "User");
        return u;
    }

    /**
     * Where the client connected from; a record without one (the server's own) names the server.
     */
    private static Document source(AuditEvent e) {
        Document s = new Document();
        if (e.ip != null && !e.ip.isEmpty()) s.append("ip", e.ip);
        if (e.host != null && !e.host.isEmpty()) s.append("hostname", e.host);
        if (s.isEmpty()) s.append("name", e.server);
        return s;
    }

    private static void status(Document d, AuditEvent e) {
        String outcome = e.outcome();
        int id = "success".equals(outcome) ? 1 : "failure".equals(outcome) ? 2 : 0;
        d.append("status_id", id)
                .append("status", id == 1 ? "Success" : id == 2 ? "Failure" : "Unknown");
        if (e.status != null) d.append("status_code", String.valueOf(e.status));
    }

    private static Document unmapped(AuditEvent e) {
        Document u = new Document("server", e.server).append("event_name", e.eventName);
        if (e.category != null) u.append("category", e.category);
        if (e.action != null) u.append("action", e.action);
        if (e.tables != null && !e.tables.isEmpty()) u.append("tables", e.tables);
        if (e.dataClasses != null && !e.dataClasses.isEmpty())
            u.append("data_classes", e.dataClasses);
        if (e.controls != null && !e.controls.isEmpty()) u.append("controls", e.controls);
        if (e.masked != null && !e.masked.isEmpty()) u.append("masked", e.masked);
        return u;
    }

    /** A Datastore Activity's activity from the event's category and action (docs/stream.md). */
    static int datastoreActivityId(String category, String action) {
        if (category == null) return OTHER;
        String a = action == null ? "" : action;
        return switch (category) {
            case "data_read" -> READ;
            case "data_write" ->
                    switch (a) {
                        case "insert" -> CREATE;
                        case "update" -> UPDATE;
                        case "delete" -> DELETE;
                        default -> WRITE;
                    };
            case "schema_change", "account_management" ->
                    a.startsWith("create_") ? CREATE : a.startsWith("drop_") ? DELETE : UPDATE;
            case "session" -> a.equals("show") ? LIST : a.equals("use") ? CONNECT : QUERY;
            default -> OTHER;
        };
    }

    static String datastoreActivityName(int id) {
        return switch (id) {
            case READ -> "Read";
            case UPDATE -> "Update";
            case CONNECT -> "Connect";
            case QUERY -> "Query";
            case WRITE -> "Write";
            case CREATE -> "Create";
            case DELETE -> "Delete";
            case LIST -> "List";
            default -> "Other";
        };
    }

    static int severityId(String severity) {
        return switch (severity) {
            case Alert.LOW -> 2;
            case Alert.MEDIUM -> 3;
            case Alert.HIGH -> 4;
            case Alert.CRITICAL -> 5;
            default -> 0;
        };
    }

    static String severityName(int id) {
        return switch (id) {
            case 2 -> "Low";
            case 3 -> "Medium";
            case 4 -> "High";
            case 5 -> "Critical";
            default -> "Unknown";
        };
    }
}
