"""The library's façade (:class:`Database`) and what its methods return."""

from riido_pg.api.database import Database
from riido_pg.api.results import Evaluated, Listing, Loaded

__all__ = ["Database", "Evaluated", "Listing", "Loaded"]
