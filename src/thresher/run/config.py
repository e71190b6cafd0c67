"""`ExecConfig` lives in `thresher.exec_config` (so that `thresher.config` does not import the run
package, which imports it); this name stays for callers that import it from here."""

from thresher.exec_config import ExecConfig

__all__ = ["ExecConfig"]
