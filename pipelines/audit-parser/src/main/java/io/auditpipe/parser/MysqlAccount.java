package io.auditpipe.parser;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The account string MySQL writes into query events: {@code user[priv_user] @ host [ip]}
 * (for example {@code root[root] @ localhost [127.0.0.1]}). Connect events carry the plain user.
 */
public final class MysqlAccount {
    private static final Pattern ACCOUNT = Pattern.compile("^(.*?)\\[(.*?)\\] @ (.*?) \\[(.*?)\\]$");

    public final String user;
    public final String privUser;
    public final String host;
    public final String ip;

    private MysqlAccount(String user, String privUser, String host, String ip) {
        this.user = user;
        this.privUser = privUser;
        this.host = host;
        this.ip = ip;
    }

    /** The parts of {@code user[priv] @ host [ip]}, or null if the text is not in that form. */
    public static MysqlAccount parse(String text) {
        if (text == null || text.indexOf('@') < 0) {
            return null;
        }
        Matcher m = ACCOUNT.matcher(text);
        if (!m.matches()) {
            return null;
        }
        return new MysqlAccount(m.group(1), m.group(2), m.group(3).trim(), m.group(4));
    }
}
