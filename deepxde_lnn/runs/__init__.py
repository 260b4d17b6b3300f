"""Run folders and what they hold: whose folder it is and its lock
(:mod:`.folder`), checkpoints (:mod:`.checkpoint`), atomic writes (:mod:`.atomic`),
the one reader of untrusted records (:mod:`.records`), folder names
(:mod:`.names`) and provenance.
"""
