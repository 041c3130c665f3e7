package io.auditpipe.flink.records;

import io.auditpipe.parser.AuditEvent;
import java.io.Serializable;
import java.util.Objects;

/** The dimensions of the one-minute counts: server, user, event name, command class, status. */
public class StatsKey implements Serializable {
    private static final long serialVersionUID = 1L;

    public String server;
    public String user;
    public String eventName;
    public String commandClass;
    public int status;

    public StatsKey() {}

    public static StatsKey of(AuditEvent e) {
        StatsKey k = new StatsKey();
        k.server = e.server;
        k.user = e.user == null ? "" : e.user;
        k.eventName = e.eventName;
        k.commandClass = e.commandClass == null ? "" : e.commandClass;
        k.status = e.status == null ? 0 : e.status;
        return k;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof StatsKey)) return false;
        StatsKey k = (StatsKey) o;
        return status == k.status
                && Objects.equals(server, k.server)
                && Objects.equals(user, k.user)
                && Objects.equals(eventName, k.eventName)
                && Objects.equals(commandClass, k.commandClass);
    }

    @Override
    public int hashCode() {
        return Objects.hash(server, user, eventName, commandClass, status);
    }

    @Override
    public String toString() {
        return server + "|" + user + "|" + eventName + "|" + commandClass + "|" + status;
    }
}
