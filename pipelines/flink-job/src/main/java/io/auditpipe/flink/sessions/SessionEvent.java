package io.auditpipe.flink.sessions;

import io.auditpipe.parser.AuditEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * What a session needs of a stored event, and nothing more: it crosses the shuffle to the session
 * builder (keyed by server and connection id), so the statement, the masked text and the fields no
 * session shows stay behind. A Flink POJO; its lists are ArrayLists (Kryo copies those, not
 * immutable ones).
 */
public class SessionEvent {
    public String id;
    public String server;
    public long connectionId;
    public long eventTimeMillis;
    public String user;
    public String host;
    public String ip;
    public String osUser;
    public String db;

    /** success or failure for a login, else null. */
    public String authOutcome;

    public boolean logout;
    public String category;

    /** Anything but a login whose outcome is a failure (the server refused the statement). */
    public boolean failed;

    public List<String> tables;
    public List<String> dataClasses;

    public SessionEvent() {}

    /**
     * The session fields of a stored event; null for one without a connection id, or with
     * connection id 0: the server's own records (the audit plugin's start and stop) belong to no
     * session.
     */
    public static SessionEvent of(AuditEvent e) {
        if (e.connectionId == null || e.connectionId == 0 || e.server == null) return null;
        SessionEvent s = new SessionEvent();
        s.id = e.id;
        s.server = e.server;
        s.connectionId = e.connectionId;
        s.eventTimeMillis = e.eventTimeMillis;
        s.user = e.user;
        s.host = e.host;
        s.ip = e.ip;
        s.osUser = e.osUser;
        s.db = e.db;
        s.authOutcome = e.authOutcome;
        s.logout = SessionBuilder.LOGOUT.equals(e.action);
        s.category = e.category;
        s.failed = !e.isLoginEvent() && AuditEvent.AUTH_FAILURE.equals(e.outcome());
        s.tables = e.tables == null || e.tables.isEmpty() ? null : new ArrayList<>(e.tables);
        s.dataClasses =
                e.dataClasses == null || e.dataClasses.isEmpty()
                        ? null
                        : new ArrayList<>(e.dataClasses);
        return s;
    }

    public boolean isLogin() {
        return authOutcome != null;
    }

    /** The key of its session: server and connection id. */
    public String key() {
        return server + "/" + connectionId;
    }
}
