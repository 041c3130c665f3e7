package io.auditpipe.flink.records;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.Digests;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * The dimensions of the daily rollups (docs/queries.md "Rollups"): server, user, principal class,
 * category, action and the list of controls, for the events a review counts over its whole period
 * ({@link #counts}: those that evidence a control, and everything administrators do). A field the
 * event lacks stays null and is left out of the stored row, as a group by that field leaves it out
 * of the events' rows. The controls travel as one comma-joined string (no control id has a comma),
 * so the key is a POJO of strings that Flink serializes field by field.
 */
public class RollupKey implements Serializable {
    private static final long serialVersionUID = 1L;

    public String server;
    public String user;
    public String principalClass;
    public String category;
    public String action;
    public String controls;

    public RollupKey() {}

    /** Whether the rollups count the event: it evidences a control, or an administrator did it. */
    public static boolean counts(AuditEvent e) {
        return (e.controls != null && !e.controls.isEmpty())
                || ComplianceSettings.ADMINISTRATOR.equals(e.principalClass);
    }

    public static RollupKey of(IngestedEvent ie) {
        AuditEvent e = ie.event;
        RollupKey k = new RollupKey();
        k.server = e.server;
        k.user = e.user;
        k.principalClass = e.principalClass;
        k.category = e.category;
        k.action = e.action;
        k.controls = e.controls == null ? "" : String.join(",", e.controls);
        return k;
    }

    /** Keys the stream by the key itself. */
    public static final class Itself implements KeySelector<RollupKey, RollupKey> {
        private static final long serialVersionUID = 1L;

        @Override
        public RollupKey getKey(RollupKey k) {
            return k;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RollupKey k && Arrays.equals(fields(), k.fields());
    }

    /** {@code Objects.hash} of the fields in order: the key group of a key stays what it was. */
    @Override
    public int hashCode() {
        return Arrays.hashCode(fields());
    }

    private String[] fields() {
        return new String[] {server, user, principalClass, category, action, controls};
    }

    /**
     * The key as text for a document id: the server, then the SHA-256 of every field, each written
     * with its length (null as -1), so no user name, however written, makes two keys one id.
     */
    public String idText() {
        StringBuilder b = new StringBuilder();
        for (String f : fields()) {
            b.append(f == null ? -1 : f.length())
                    .append(':')
                    .append(f == null ? "" : f)
                    .append(';');
        }
        return server + "|" + Digests.sha256Hex(b.toString().getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return server
                + "|"
                + user
                + "|"
                + principalClass
                + "|"
                + category
                + "|"
                + action
                + "|"
                + controls;
    }
}
