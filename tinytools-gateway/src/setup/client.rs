//! The clients `setup` knows, and where their files are.

use std::path::PathBuf;

use super::SetupError;
use crate::import::ClientFormat;

/// A client `setup` writes the gateway into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: `~/.claude.json`.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json`.
    Cursor,
    /// VS Code: the user profile's `mcp.json`.
    VsCode,
    /// Codex: `~/.codex/config.toml`.
    Codex,
}

impl Client {
    /// Every client, in the order `--help` lists them.
    pub const ALL: [Self; 5] = [Self::ClaudeCode, Self::ClaudeDesktop, Self::Cursor, Self::VsCode, Self::Codex];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        self.format().name()
    }

    /// The client of a command-line name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|client| client.name() == name)
    }

    /// The import format of its file.
    pub fn format(self) -> ClientFormat {
        match self {
            Self::ClaudeCode => ClientFormat::ClaudeCode,
            Self::ClaudeDesktop => ClientFormat::ClaudeDesktop,
            Self::Cursor => ClientFormat::Cursor,
            Self::VsCode => ClientFormat::VsCode,
            Self::Codex => ClientFormat::Codex,
        }
    }

    /// The top-level key its servers are under.
    pub(super) fn servers_key(self) -> &'static str {
        match self {
            Self::VsCode => "servers",
            Self::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }

    /// Where its user-level config lives.
    ///
    /// # Errors
    /// [`SetupError::NoHome`] when the variables it is found from are unset.
    pub fn default_file(self, env: &Env) -> Result<PathBuf, SetupError> {
        let home = || env.home.clone().ok_or(SetupError::NoHome { client: self.name(), variable: "HOME" });
        Ok(match self {
            Self::ClaudeCode => home()?.join(".claude.json"),
            Self::Cursor => home()?.join(".cursor").join("mcp.json"),
            Self::Codex => match &env.codex_home {
                Some(dir) => dir.join("config.toml"),
                None => home()?.join(".codex").join("config.toml"),
            },
            Self::ClaudeDesktop => self.app_dir(env, "Claude")?.join("claude_desktop_config.json"),
            Self::VsCode => self.app_dir(env, "Code")?.join("User").join("mcp.json"),
        })
    }

    /// An application's settings directory on `env`'s operating system.
    fn app_dir(self, env: &Env, app: &str) -> Result<PathBuf, SetupError> {
        let no_home = || SetupError::NoHome { client: self.name(), variable: "HOME" };
        let base = match env.os.as_str() {
            "macos" => env.home.clone().ok_or_else(no_home)?.join("Library").join("Application Support"),
            "windows" => match &env.appdata {
                Some(appdata) => appdata.clone(),
                None => env.home.clone().ok_or(SetupError::NoHome { client: self.name(), variable: "APPDATA" })?,
            },
            _ => env.config_home().ok_or_else(no_home)?,
        };
        Ok(base.join(app))
    }
}

/// The environment the files are found from; [`Env::from_process`] reads it.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `HOME` (`USERPROFILE` when unset).
    pub home: Option<PathBuf>,
    /// `APPDATA` (Windows).
    pub appdata: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `CODEX_HOME`.
    pub codex_home: Option<PathBuf>,
    /// The operating system, as [`std::env::consts::OS`] names it.
    pub os: String,
}

impl Env {
    /// This process's environment; empty variables count as unset.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        Self {
            home: var("HOME").or_else(|| var("USERPROFILE")),
            appdata: var("APPDATA"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            codex_home: var("CODEX_HOME"),
            os: std::env::consts::OS.to_owned(),
        }
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    fn config_home(&self) -> Option<PathBuf> {
        self.xdg_config_home.clone().or_else(|| self.home.as_ref().map(|home| home.join(".config")))
    }

    /// The gateway config `setup` writes for `client` by default:
    /// `$XDG_CONFIG_HOME/tinytools-gateway/<client>.json`, else under `~/.config`.
    ///
    /// # Errors
    /// [`SetupError::NoHome`] when neither variable is set.
    pub fn gateway_config(&self, client: Client) -> Result<PathBuf, SetupError> {
        let base = self.config_home().ok_or(SetupError::NoHome { client: client.name(), variable: "HOME" })?;
        Ok(base.join("tinytools-gateway").join(format!("{}.json", client.name())))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn env(os: &str) -> Env {
        Env { home: Some("/h".into()), appdata: Some("/a".into()), os: os.into(), ..Env::default() }
    }

    #[test]
    fn each_client_file_is_where_its_docs_say() {
        let file = |client: Client, env: &Env| client.default_file(env).unwrap();
        let linux = env("linux");
        assert_eq!(file(Client::ClaudeCode, &linux), Path::new("/h/.claude.json"));
        assert_eq!(file(Client::Cursor, &linux), Path::new("/h/.cursor/mcp.json"));
        assert_eq!(file(Client::Codex, &linux), Path::new("/h/.codex/config.toml"));
        assert_eq!(file(Client::ClaudeDesktop, &linux), Path::new("/h/.config/Claude/claude_desktop_config.json"));
        assert_eq!(file(Client::VsCode, &linux), Path::new("/h/.config/Code/User/mcp.json"));
        let xdg = Env { xdg_config_home: Some("/x".into()), codex_home: Some("/cx".into()), ..linux };
        assert_eq!(file(Client::VsCode, &xdg), Path::new("/x/Code/User/mcp.json"));
        assert_eq!(file(Client::Codex, &xdg), Path::new("/cx/config.toml"));
        assert_eq!(xdg.gateway_config(Client::Cursor).unwrap(), Path::new("/x/tinytools-gateway/cursor.json"));
        let mac = env("macos");
        let support = Path::new("/h/Library/Application Support");
        assert_eq!(file(Client::ClaudeDesktop, &mac), support.join("Claude/claude_desktop_config.json"));
        assert_eq!(file(Client::VsCode, &mac), support.join("Code/User/mcp.json"));
        let windows = env("windows");
        assert_eq!(file(Client::ClaudeDesktop, &windows), Path::new("/a/Claude/claude_desktop_config.json"));
        assert_eq!(file(Client::VsCode, &windows), Path::new("/a/Code/User/mcp.json"));
        let error = Client::Cursor.default_file(&Env::default()).unwrap_err().to_string();
        assert!(error.contains("HOME is not set") && error.contains("--file"), "{error}");
    }

    #[test]
    fn names_round_trip() {
        for client in Client::ALL {
            assert_eq!(Client::from_name(client.name()), Some(client));
        }
        assert_eq!(Client::from_name("zed"), None);
    }
}
