package io.auditpipe.flink;

import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.state.RestoreCheck;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The job's entry point: reads its options ({@code --config job.properties}, docs/job-options.md),
 * and runs {@link AuditPipeline} over the real sources and sinks ({@link JobWiring}). {@code
 * --restored-from} names the snapshot a Flink cluster restores the job from, which a MiniCluster
 * reads from its options: the job starts from it only when it lacks no operator whose state it
 * holds but sinks' ({@link RestoreCheck}). {@code --check-options} validates the options without
 * running; {@code --print-options} prints their reference; {@code --print-contract} prints what the
 * CLI and the docs know of the job (schemas/job-contract.json, {@link JobContract}).
 */
public final class AuditPipelineJob {
    private AuditPipelineJob() {}

    public static void main(String[] args) throws Exception {
        Path config = null;
        String restoredFrom = null;
        boolean checkOnly = false;
        for (int i = 0; i < args.length; i++) {
            if ("--config".equals(args[i]) && i + 1 < args.length) {
                config = Path.of(args[++i]);
            } else if ("--restored-from".equals(args[i]) && i + 1 < args.length) {
                restoredFrom = args[++i];
            } else if ("--check-options".equals(args[i])) {
                checkOnly = true;
            } else if ("--print-options".equals(args[i])) {
                System.out.print(JobOptions.markdownReference());
                return;
            } else if ("--print-contract".equals(args[i])) {
                System.out.print(JobContract.json());
                return;
            }
        }
        if (config == null) {
            System.err.println(
                    "usage: AuditPipelineJob --config <job.properties> [--restored-from <snapshot>]"
                            + " [--check-options] | --print-options | --print-contract");
            System.exit(2);
        }
        JobOptions.Loaded loaded;
        try {
            loaded = JobOptions.load(config);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        // the deployment's options, validated without running
        // (tests/e2e/deployment/test_deployment_job_options.py)
        if (checkOnly) {
            System.out.println(config + ": the job's options are valid");
            return;
        }
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(loaded.flink);
        configureCheckpointing(env, loaded.job);
        new AuditPipeline(loaded.job, JobWiring.sources(loaded.job), JobWiring.sinks(loaded.job))
                .build(env);
        if (restoredFrom == null)
            restoredFrom = loaded.flink.get(StateRecoveryOptions.SAVEPOINT_PATH);
        if (restoredFrom != null
                && !loaded.flink.get(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE)) {
            List<RestoreCheck.Unclaimed> unclaimed;
            try {
                unclaimed = RestoreCheck.unclaimed(env.getStreamGraph(false), restoredFrom);
            } catch (java.io.IOException e) {
                throw refused(
                        "cannot read the snapshot "
                                + restoredFrom
                                + " to see which operators' state it holds: "
                                + e.getMessage());
            }
            String refusal = RestoreCheck.refusal(unclaimed, restoredFrom);
            if (refusal != null) throw refused(refusal);
            if (!unclaimed.isEmpty()) {
                System.err.println(
                        "auditpipe job: leaving behind the state of sinks this job no longer has: "
                                + unclaimed);
                env.configure(
                        Configuration.fromMap(
                                Map.of(
                                        StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE.key(),
                                        "true")));
            }
        }
        env.execute(loaded.job.get(JobOptions.JOB_NAME));
    }

    /**
     * Why the job does not start from its snapshot: said on stderr in the line the CLI looks for
     * (cli/auditpipe/stack/flink/job.py REFUSAL), and thrown, which ends a MiniCluster's process
     * and fails a cluster's run request (never System.exit: in a cluster this code runs in the
     * JobManager).
     */
    /**
     * The refusal, said the same way in the log and in the exception a cluster's REST API returns.
     */
    private static IllegalStateException refused(String reason) {
        String said = "auditpipe job refuses to start: " + reason;
        System.err.println(said);
        return new IllegalStateException(said);
    }

    /**
     * Checkpointing as the job needs it: exactly-once state (the window counts), retained
     * checkpoints.
     */
    public static void configureCheckpointing(
            StreamExecutionEnvironment env, Configuration options) {
        env.enableCheckpointing(
                options.get(JobOptions.CHECKPOINT_INTERVAL).toMillis(),
                CheckpointingMode.EXACTLY_ONCE);
        env.getCheckpointConfig()
                .setExternalizedCheckpointRetention(
                        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    }
}
