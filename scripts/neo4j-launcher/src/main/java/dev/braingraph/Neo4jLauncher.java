package dev.braingraph;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Embedded Neo4j community DBMS with Bolt on loopback.
 *
 * <p>Usage: {@code Neo4jLauncher <homeDir> <boltPort> [password]}. Without a password, auth is disabled.
 * If {@code <homeDir>/neo4j.conf} exists, its settings are loaded first (memory, shutdown timings, ...);
 * the Bolt, HTTP and auth settings below always win over it.
 * Prints {@code BRAIN_GRAPH_NEO4J_READY} once Bolt accepts connections and blocks until terminated.
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws InterruptedException {
        try {
            run(args);
        } catch (RuntimeException | Error e) {
            // Exit instead of hanging on the DBMS's non-daemon threads, so a supervisor sees the failure.
            e.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
    }

    private static void run(String[] args) throws InterruptedException {
        if (args.length < 2) {
            System.err.println("usage: Neo4jLauncher <homeDir> <boltPort> [password]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int boltPort = Integer.parseInt(args[1]);
        String password = args.length > 2 && !args[2].isEmpty() ? args[2] : null;

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home);
        Path conf = home.resolve("neo4j.conf");
        if (Files.isRegularFile(conf)) {
            builder.loadPropertiesFromFile(conf);
        }
        DatabaseManagementService dbms = builder
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", boltPort))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", boltPort))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, password != null)
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofSeconds(60))
                .build();

        if (password != null) {
            try {
                dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                        "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                        java.util.Map.of("password", password));
            } catch (RuntimeException e) {
                // A restart on kept data: the password is already the requested one.
                if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                    throw e;
                }
            }
        }
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));
        System.out.println("BRAIN_GRAPH_NEO4J_READY bolt://127.0.0.1:" + boltPort);
        System.out.flush();
        stopped.await();
    }
}
