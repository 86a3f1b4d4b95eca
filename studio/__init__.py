"""UI-neutral support for the Streamlit app: the job registry, debate turns, charts and report export.

Only ``studio.ui`` imports streamlit; everything else is tested without a browser.
"""
