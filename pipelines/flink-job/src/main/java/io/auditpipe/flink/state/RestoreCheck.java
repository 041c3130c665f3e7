package io.auditpipe.flink.state;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;

/**
 * Whether a job may start from a snapshot (a checkpoint or a savepoint) holding the state of
 * operators it does not have. The state of a sink (its pending Kafka transactions) may stay behind:
 * a sink the configuration no longer asks for takes nothing with it. Any other state (a server's
 * chain and the copies it remembers, the open counts, the sessions, the baselines, the alert rules,
 * the sources' positions) is what the job would lose: then it does not start, and says which
 * operator's state would be lost, rather than start without it.
 */
public final class RestoreCheck {
    private RestoreCheck() {}

    /** An operator's state in the snapshot that the job has no operator for. */
    public record Unclaimed(String uid, String name, boolean sink) {
        @Override
        public String toString() {
            return "'" + uid + "' (" + name + ")";
        }
    }

    /**
     * The operators with state in {@code snapshot} (a folder with _metadata) that {@code graph}
     * lacks.
     */
    public static List<Unclaimed> unclaimed(StreamGraph graph, String snapshot) throws IOException {
        Set<OperatorID> ids = new HashSet<>();
        for (byte[] hash :
                new StreamGraphHasherV2().traverseStreamGraphAndGenerateHashes(graph).values())
            ids.add(new OperatorID(hash));
        List<Unclaimed> out = new ArrayList<>();
        for (OperatorState s : metadata(snapshot).getOperatorStates()) {
            if (ids.contains(s.getOperatorID())) continue;
            if (s.getStates().stream().noneMatch(t -> t.hasState())
                    && s.getCoordinatorState() == null) continue;
            String name = s.getOperatorName().orElse("unnamed");
            out.add(
                    new Unclaimed(
                            s.getOperatorUid().orElse(s.getOperatorID().toHexString()),
                            name,
                            name.endsWith(": Writer") || name.endsWith(": Committer")));
        }
        return out;
    }

    /**
     * Whether the job may start from the snapshot leaving {@code unclaimed} behind: only sinks'
     * state; else why not, fit for the person who started it.
     */
    public static String refusal(List<Unclaimed> unclaimed, String snapshot) {
        List<Unclaimed> lost = unclaimed.stream().filter(u -> !u.sink()).toList();
        if (lost.isEmpty()) return null;
        return "the job's state in "
                + snapshot
                + " holds the state of "
                + (lost.size() == 1 ? "an operator" : lost.size() + " operators")
                + " this job does not have: "
                + String.join(", ", lost.stream().map(Unclaimed::toString).toList())
                + ". Starting without it would lose what it holds (a chain's tip, the copies it"
                + " remembers, counts, sessions, baselines, an alert rule's memory or a source's"
                + " position), so the job does not start. Run the release that wrote the state, or"
                + " start without that state: flink.execution.state-recovery.ignore-unclaimed-state:"
                + " true in flink.job_options (docs/operations.md, Upgrade).";
    }

    private static CheckpointMetadata metadata(String snapshot) throws IOException {
        Path folder = new Path(snapshot);
        Path file = folder.getName().equals("_metadata") ? folder : new Path(folder, "_metadata");
        FileSystem fs = file.getFileSystem();
        try (DataInputStream in = new DataInputStream(fs.open(file))) {
            return Checkpoints.loadCheckpointMetadata(
                    in, RestoreCheck.class.getClassLoader(), folder.toString());
        }
    }
}
