package io.auditpipe.flink.sessions;

/**
 * What {@link SessionBuilder} keeps of one open connection: the session so far, what it last
 * emitted of it, and its pending event-time timer. One value of keyed state per connection (a Flink
 * POJO), read once per checkpoint interval and written back once before each snapshot.
 */
public class OpenSession {
    /** No timer pending. */
    public static final long NONE = Long.MIN_VALUE;

    public Session session;

    /** The session's records when it was last emitted; -1 before the first emission. */
    public long emittedRecords = -1;

    /** Its last record's time when it was last emitted. */
    public long emittedAt;

    /** The pending timer's time, or {@link #NONE}. */
    public long timerAt = NONE;

    public OpenSession() {}

    OpenSession(Session session) {
        this.session = session;
    }

    /** Whether the session changed since it was last emitted. */
    boolean changed() {
        return emittedRecords != session.records;
    }
}
