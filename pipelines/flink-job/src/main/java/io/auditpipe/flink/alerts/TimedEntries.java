package io.auditpipe.flink.alerts;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The recent events of one key, in event-time order (ties by event id, so the order does not depend
 * on arrival): the state of the login rules. Each entry has a time, the event id and a subject (the
 * account, for the per-origin rule).
 */
public class TimedEntries implements Serializable {
    private static final long serialVersionUID = 1L;

    public List<Long> times = new ArrayList<>();
    public List<String> ids = new ArrayList<>();
    public List<String> subjects = new ArrayList<>();

    /**
     * Event time before which entries belong to an episode already alerted on (Long.MIN_VALUE:
     * none).
     */
    public long suppressUntil = Long.MIN_VALUE;

    /** For login_after_failures: failures at or before this time were already reported. */
    public long consumedUpTo = Long.MIN_VALUE;

    public TimedEntries() {}

    public int size() {
        return times.size();
    }

    public long maxTime() {
        return times.isEmpty() ? Long.MIN_VALUE : times.get(times.size() - 1);
    }

    /** Inserts in (time, id) order; false when the id is already there. */
    public boolean add(long time, String id, String subject) {
        int i = times.size();
        while (i > 0
                && (times.get(i - 1) > time
                        || (times.get(i - 1) == time && ids.get(i - 1).compareTo(id) > 0))) i--;
        if (i > 0 && times.get(i - 1) == time && ids.get(i - 1).equals(id)) return false;
        times.add(i, time);
        ids.add(i, id);
        subjects.add(i, subject);
        return true;
    }

    /** Removes entries older than {@code before}. */
    public void pruneBefore(long before) {
        int n = 0;
        while (n < times.size() && times.get(n) < before) n++;
        if (n > 0) {
            times.subList(0, n).clear();
            ids.subList(0, n).clear();
            subjects.subList(0, n).clear();
        }
    }

    /** A window [from, from + length) and the entries in it. */
    public static final class Window {
        public final int first;
        public final int last; // inclusive
        public final int distinctSubjects;

        Window(int first, int last, int distinctSubjects) {
            this.first = first;
            this.last = last;
            this.distinctSubjects = distinctSubjects;
        }

        public int count() {
            return last - first + 1;
        }
    }

    /**
     * Of the windows of {@code length} that start at an entry and contain {@code time}, the one
     * with the most entries (or distinct subjects, when {@code bySubject}); the earliest on a tie.
     */
    public Window busiestWindowAround(long time, long length, boolean bySubject) {
        Window best = null;
        for (int i = 0; i < times.size(); i++) {
            long start = times.get(i);
            if (start > time) break;
            if (start <= time - length) continue;
            int j = i;
            Set<String> subjects = bySubject ? new HashSet<>() : null;
            while (j < times.size() && times.get(j) < start + length) {
                if (bySubject) subjects.add(this.subjects.get(j));
                j++;
            }
            Window w = new Window(i, j - 1, bySubject ? subjects.size() : j - i);
            int score = bySubject ? w.distinctSubjects : w.count();
            int bestScore = best == null ? -1 : (bySubject ? best.distinctSubjects : best.count());
            if (score > bestScore) best = w;
        }
        return best;
    }

    public List<String> idsIn(Window w) {
        return new ArrayList<>(ids.subList(w.first, w.last + 1));
    }

    /** Entries with time in (from, to): their index range [first, last], or null when none. */
    public int[] between(long fromExclusive, long toExclusive) {
        int first = -1, last = -1;
        for (int i = 0; i < times.size(); i++) {
            long t = times.get(i);
            if (t > fromExclusive && t < toExclusive) {
                if (first < 0) first = i;
                last = i;
            }
        }
        return first < 0 ? null : new int[] {first, last};
    }
}
