package io.auditpipe.flink.sessions;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One connection to one server, as its audit records tell it: who (user, host, IP, OS user), from
 * its login (when the records hold it) to its logout or its last record, what it did (records by
 * category, failures, tables and data classes touched). A Flink POJO: the builder's keyed state and
 * what it emits, each emission the whole session so far under the same {@link #id}, the newest one
 * the one to keep (an upsert by id).
 */
public class Session {
    /** How a session ended; null while it is open. */
    public static final String END_LOGOUT = "logout";

    public static final String END_FAILED_LOGIN = "failed_login";
    public static final String END_IDLE = "idle";

    /**
     * A new login on the same connection id (the server restarted and numbers connections again).
     */
    public static final String END_SUPERSEDED = "superseded";

    /**
     * {@code <server>/<connection id>/<start ms>}: the start is the login's time, else the first
     * record's.
     */
    public String id;

    public String server;
    public long connectionId;
    public String user;
    public String host;
    public String ip;
    public String osUser;
    public String db;

    /**
     * The login's time and outcome (success, failure); null when the records before the first one
     * seen are not here.
     */
    public Long loginMillis;

    public String loginOutcome;
    public String loginEventId;
    public long firstMillis;
    public long lastMillis;
    public Long logoutMillis;
    public String end;
    public long records;
    public long failures;

    /** Records by taxonomy category (schemas: EventTaxonomy's categories). */
    public Map<String, Long> categories = new TreeMap<>();

    /**
     * Tables touched, sorted, at most the builder's bound; {@link #moreTables} counts the others.
     */
    public List<String> tables = new ArrayList<>();

    public long moreTables;
    public List<String> dataClasses = new ArrayList<>();
    public String firstEventId;
    public String lastEventId;

    public Session() {}

    public boolean open() {
        return end == null;
    }

    /**
     * Milliseconds from the start (login, else first record) to the logout, else the last record.
     */
    public long durationMillis() {
        long start = loginMillis != null ? Math.min(loginMillis, firstMillis) : firstMillis;
        long stop = logoutMillis != null ? Math.max(logoutMillis, lastMillis) : lastMillis;
        return stop - start;
    }

    void addTables(List<String> touched, int bound) {
        if (touched == null || touched.isEmpty()) return;
        TreeSet<String> all = new TreeSet<>(tables);
        for (String t : touched) {
            if (all.contains(t)) continue;
            if (all.size() < bound) all.add(t);
            else moreTables++;
        }
        tables = new ArrayList<>(all);
    }

    void addDataClasses(List<String> classes) {
        if (classes == null || classes.isEmpty()) return;
        TreeSet<String> all = new TreeSet<>(dataClasses);
        all.addAll(classes);
        dataClasses = new ArrayList<>(all);
    }

    /** A copy to emit: the state goes on changing after it. */
    public Session copy() {
        Session s = new Session();
        s.id = id;
        s.server = server;
        s.connectionId = connectionId;
        s.user = user;
        s.host = host;
        s.ip = ip;
        s.osUser = osUser;
        s.db = db;
        s.loginMillis = loginMillis;
        s.loginOutcome = loginOutcome;
        s.loginEventId = loginEventId;
        s.firstMillis = firstMillis;
        s.lastMillis = lastMillis;
        s.logoutMillis = logoutMillis;
        s.end = end;
        s.records = records;
        s.failures = failures;
        s.categories = new TreeMap<>(categories);
        s.tables = new ArrayList<>(tables);
        s.moreTables = moreTables;
        s.dataClasses = new ArrayList<>(dataClasses);
        s.firstEventId = firstEventId;
        s.lastEventId = lastEventId;
        return s;
    }

    @Override
    public String toString() {
        return id + " " + user + " " + (end == null ? "open" : end) + " records=" + records;
    }
}
